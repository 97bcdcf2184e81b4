import { AppError, checkEmail, isId, newId, type CallOptions } from '@licensing/runtime';
import {
  archivedRefusal,
  isOneOf,
  priceIntervals,
  withPolicyDefaults,
  type PriceInterval,
  type CreateCheckoutSessionRequest,
  type GetProductRequest,
  type Product,
} from '@licensing/proto';
import { checkMetadata } from '../domain/metadata';
import type { PaymentProvider } from '../domain/payments';
import { checkRedirectUrl, expiryMinutes } from '../domain/session';
import { checkoutCreated } from '../events/checkout-events';
import { checkQuantity } from '../domain/subscription';
import type { SessionDoc, SessionRecurring } from '../store/models';
import type { CheckoutDeps } from './deps';

export interface ProductLookup {
  getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product>;
}

export interface SessionCreationDeps extends CheckoutDeps {
  products: ProductLookup;
  provider: PaymentProvider;
  /** PUBLIC_BASE_URL without a trailing slash: where the hosted test-mode page is. */
  baseUrl: string;
}

/** A new session's checked input; also what an Idempotency-Key's request is compared by. */
export interface NewSession {
  product_id: string;
  customer_email: string;
  success_url: string;
  cancel_url: string;
  metadata: Record<string, string>;
  minutes: number;
  /** As asked (0: 1); checked against the price once it is read (recurring prices only). */
  quantity: number;
}

/** Checks what needs no I/O, before anything else happens (https-only URLs in production). */
export function checkNewSession(req: CreateCheckoutSessionRequest, httpsOnly: boolean): NewSession {
  if (!isId('prod', req.product_id)) throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
  return {
    product_id: req.product_id,
    customer_email: req.customer_email ? checkEmail('customer_email', req.customer_email) : '',
    success_url: checkRedirectUrl('success_url', req.success_url, true, httpsOnly),
    cancel_url: checkRedirectUrl('cancel_url', req.cancel_url, false, httpsOnly),
    metadata: checkMetadata(req.metadata),
    minutes: expiryMinutes(req.expires_in_minutes),
    quantity: req.quantity ?? 0,
  };
}

/** The product sold, at its price × the seats asked for; refused when the product has no price. */
async function pricedSale(
  products: SessionCreationDeps['products'],
  accountId: string,
  input: NewSession,
  requestId: string,
) {
  const product = await products.getProduct({ account_id: accountId, id: input.product_id }, { requestId });
  // An archived product sells nothing (proto/rules/product-sales.ts); sessions opened before it was
  // archived go on, and a paid one gets its licence.
  const archived = archivedRefusal(product, 'sold');
  if (archived) throw new AppError('conflict', archived);
  if (!product.price)
    throw AppError.invalid(
      'product_id',
      'this product has no price: set one (PATCH /api/v1/products/{id} {"price": {...}}) before selling it',
    );
  const interval = product.price.interval || '';
  if (interval && !isOneOf(priceIntervals, interval)) throw new AppError('internal', 'unknown price interval');
  const quantity = checkQuantity(input.quantity, !!interval);
  const policy = withPolicyDefaults(product.policy);
  const amount = product.price.amount * quantity;
  const recurring: SessionRecurring | null = interval
    ? {
        interval: interval as PriceInterval,
        interval_count: product.price.interval_count || 1,
        trial_days: product.price.trial_days ?? 0,
        amount,
        payment_grace_days: policy.payment_grace_days,
      }
    : null;
  return { product, price: product.price, quantity, policy, amount, recurring };
}

/** The session as stored: open, with the provider's page for it. */
function openSessionDoc(
  sale: {
    id: string;
    accountId: string;
    input: NewSession;
    product: Awaited<ReturnType<typeof pricedSale>>['product'];
    price: Awaited<ReturnType<typeof pricedSale>>['price'];
    amount: number;
    quantity: number;
    recurring: SessionRecurring | null;
    policy: ReturnType<typeof withPolicyDefaults>;
    now: Date;
    expiresAt: Date;
  },
  provider: SessionCreationDeps['provider'],
  payment: Awaited<ReturnType<SessionCreationDeps['provider']['start']>>,
): Omit<SessionDoc, 'outbox'> {
  const { id, accountId, input, product, price, amount, quantity, recurring, policy, now, expiresAt } = sale;
  return {
    _id: id,
    account_id: accountId,
    product_id: input.product_id,
    product_name: product.name,
    status: 'open',
    amount,
    currency: price.currency,
    customer_email: input.customer_email,
    customer_email_lc: input.customer_email.toLowerCase(),
    success_url: input.success_url,
    cancel_url: input.cancel_url,
    metadata: input.metadata,
    expires_at: expiresAt,
    created_at: now,
    license_key: null,
    payment_id: null,
    paid_at: null,
    provider: provider.name,
    provider_session_id: payment.providerSessionId,
    provider_url: payment.url,
    livemode: payment.livemode,
    refund_action: policy.refund_action,
    paid_with: null,
    refunded_at: null,
    quantity,
    recurring,
    test_card: null,
  };
}

/**
 * An open session for a priced product of this account, stored once the provider has a page for it.
 * `idempotent`: the session id an idempotent request's runs share (runtime idempotency.ts): a run repeated
 * after one that got as far as storing the session answers with it, and the provider sees the same id
 * (Stripe's own idempotency key is made from it).
 */
export async function createSession(
  deps: SessionCreationDeps,
  accountId: string,
  input: NewSession,
  requestId: string,
  idempotent?: { sessionId: string; resumed: boolean },
): Promise<Omit<SessionDoc, 'outbox'>> {
  const { store, outbox, clock, products, provider, baseUrl } = deps;
  const earlier = async () => {
    const found = idempotent && (await store.find(accountId, idempotent.sessionId));
    if (found) outbox.flush(store.models.Session, found._id); // in case that run stopped right after the insert
    return found || null;
  };
  if (idempotent?.resumed) {
    const found = await earlier();
    if (found) return found;
  }
  const { product, price, quantity, policy, amount, recurring } = await pricedSale(
    products,
    accountId,
    input,
    requestId,
  );
  const now = clock.now();
  const id = idempotent?.sessionId || newId('cs');
  const expiresAt = new Date(now.getTime() + input.minutes * 60_000);
  // The provider's side first: a session is stored only once the buyer has somewhere to pay.
  const payment = await provider.start({
    sessionId: id,
    accountId,
    productName: product.name,
    amount,
    currency: price.currency,
    customerEmail: input.customer_email,
    successUrl: input.success_url,
    cancelUrl: input.cancel_url,
    expiresAt,
    hostedPageUrl: `${baseUrl}/checkout/${id}`,
    ...(recurring
      ? {
          recurring: {
            interval: recurring.interval,
            intervalCount: recurring.interval_count,
            trialDays: recurring.trial_days,
            quantity,
            unitAmount: price.amount,
            productId: input.product_id,
          },
        }
      : {}),
  });
  const doc = openSessionDoc(
    { id, accountId, input, product, price, amount, quantity, recurring, policy, now, expiresAt },
    provider,
    payment,
  );
  try {
    await store.insert(doc, [checkoutCreated(doc)]);
  } catch (err) {
    // The id taken: another run of the same request stored it first (its owner thought dead).
    const found = (err as { code?: number })?.code === 11000 ? await earlier() : null;
    if (found) return found;
    throw err;
  }
  outbox.flush(store.models.Session, doc._id);
  return doc;
}
