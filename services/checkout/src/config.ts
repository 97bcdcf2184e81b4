import { bool, int, oneOf, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const checkoutSchema = {
  ...serviceSchema('checkout', 15054),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:15052' }),
  LICENSE_GRPC_ADDR: str('Licence service address (host:port), to issue the licence of a paid session', {
    default: '127.0.0.1:15053',
  }),
  HTTP_HOST: str('Address the Stripe webhook receiver binds to', { default: '127.0.0.1' }),
  HTTP_PORT: int(
    "Port of the Stripe webhook receiver (the gateway proxies /webhooks/stripe to it; the hosted checkout page is the web component's)",
    { default: 8081, min: 0, max: 65535 },
  ),
  PUBLIC_BASE_URL: str(
    'Public address of the gateway, for the hosted checkout page URLs (served by the web component behind it)',
    {
      default: 'http://127.0.0.1:8080',
    },
  ),
  EXPIRY_SWEEP_INTERVAL_MS: int('How often open sessions past their expiry are marked expired', {
    default: 30_000,
    min: 50,
  }),
  PAYMENT_PROVIDER: oneOf(
    ['test', 'stripe'] as const,
    'Who takes payments: stripe, or the built-in test mode (in production test mode also needs CHECKOUT_TEST_MODE=true)',
    { default: 'test' },
  ),
  CHECKOUT_TEST_MODE: bool(
    'Production only: allow PAYMENT_PROVIDER=test, or a Stripe test key (sk_test_…), where test cards "pay" and issue real licences',
    { default: false },
  ),
  STRIPE_SECRET_KEY: str(
    'Stripe API secret key (sk_live_… or sk_test_…; a restricted rk_… key works too); needed with PAYMENT_PROVIDER=stripe',
    { default: '', secret: true },
  ),
  STRIPE_WEBHOOK_SECRET: str(
    'Signing secret of the Stripe webhook endpoint (whsec_…) that points at /webhooks/stripe; needed with PAYMENT_PROVIDER=stripe',
    { default: '', secret: true },
  ),
  STRIPE_API_URL: str(
    'Another Stripe API address, e.g. stripe-mock in tests (http://127.0.0.1:12111); empty = api.stripe.com',
    { default: '' },
  ),
};

export type CheckoutConfig = ConfigOf<typeof checkoutSchema>;
