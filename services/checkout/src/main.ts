import {
  CheckoutPageServiceService,
  CheckoutServiceService,
  LicenseServiceClient,
  PAYMENTS_HEALTH,
  ProductServiceClient,
  SubscriptionServiceService,
} from '@licensing/proto';
import {
  AppError,
  ConfigError,
  createClient,
  internalCredential,
  PeriodicTask,
  runMain,
  startService,
  type ServiceContext,
  type ServiceRecipe,
  type StartOptions,
} from '@licensing/runtime';
import { checkoutSchema, type CheckoutConfig } from './config';
import { checkoutHandlers } from './handlers/checkout-handlers';
import { CheckoutExpirySweeper } from './jobs/expiry-sweeper';
import { checkoutModels } from './store/models';
import { pendingExpiryMigration } from './store/pending-expiry-migration';
import { CheckoutStore } from './store/queries';
import { Completion } from './use-cases/completion';
import { PaymentsNotConfigured, TestModeProvider, type PaymentProvider } from './domain/payments';
import { keyIsLive, NOT_CONFIGURED_MESSAGE, paymentModeProblems, paymentsNotConfigured } from './domain/modes';
import { StripeProvider } from './providers/stripe';
import { StripeWebhook } from './use-cases/stripe-webhook';
import { listen, stripeWebhookApp } from './http/stripe-webhook-server';
import { checkoutAccess, checkoutPageAccess, subscriptionAccess } from './access';
import { checkoutPageHandlers } from './handlers/checkout-page-handlers';
import { subscriptionHandlers } from './handlers/subscription-handlers';
import { SubscriptionStore, subscriptionModels } from './store/subscriptions';
import {
  markUnpaidPastGrace,
  startSubscription,
  syncPendingLicenses,
  type SubscriptionDeps,
} from './use-cases/subscriptions';
import { applyPending, applyStripeRefund, applyStripeSubscriptionEvent } from './use-cases/stripe-subscriptions';

type CheckoutContext = ServiceContext<CheckoutConfig>;

/**
 * The payment provider the configuration chooses: Stripe with its keys, test mode, or (Stripe chosen,
 * its keys not given yet) one that refuses every payment while checkout keeps running.
 */
function paymentProviderOf(ctx: CheckoutContext) {
  // Test mode in production only by explicit choice; Stripe only with its keys.
  const problems = paymentModeProblems(ctx.config);
  if (problems.length) throw new ConfigError(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  // Stripe chosen, its keys not given yet: checkout runs and refuses payments (domain/modes.ts).
  const notConfigured = paymentsNotConfigured(ctx.config);
  if (notConfigured) ctx.log.warn(NOT_CONFIGURED_MESSAGE);
  ctx.grpc.health.addPart(PAYMENTS_HEALTH, () => !notConfigured);
  const stripe =
    ctx.config.PAYMENT_PROVIDER === 'stripe' && !notConfigured
      ? new StripeProvider({
          secretKey: ctx.config.STRIPE_SECRET_KEY,
          webhookSecret: ctx.config.STRIPE_WEBHOOK_SECRET,
          apiUrl: ctx.config.STRIPE_API_URL,
        })
      : undefined;
  const provider: PaymentProvider = notConfigured
    ? new PaymentsNotConfigured(() => new AppError('service_unavailable', NOT_CONFIGURED_MESSAGE))
    : (stripe ?? new TestModeProvider());
  if (!stripe && !notConfigured && ctx.config.NODE_ENV === 'production')
    ctx.log.warn(
      'checkout runs in TEST MODE in production (CHECKOUT_TEST_MODE=true): the test card issues licences without payment',
    );
  if (stripe && !keyIsLive(ctx.config.STRIPE_SECRET_KEY) && ctx.config.NODE_ENV === 'production')
    ctx.log.warn(
      'checkout takes Stripe TEST payments in production (CHECKOUT_TEST_MODE=true): test cards issue licences without payment',
    );
  return { provider, stripe, notConfigured };
}

/**
 * The expiry sweep of checkout sessions. It also drops the Stripe events no subscription of ours
 * claimed in 30 days, makes Stripe subscriptions past their payment grace unpaid, and tells the
 * licences of subscriptions the state a failed call left untold.
 */
function expirySweep(
  ctx: CheckoutContext,
  sweeper: CheckoutExpirySweeper,
  subscriptions: SubscriptionDeps,
): PeriodicTask {
  return new PeriodicTask(
    'checkout expiry sweep',
    async () => {
      await sweeper.sweep();
      await subscriptions.subs.dropExpiredPending(ctx.clock.now());
      await markUnpaidPastGrace(subscriptions);
      await syncPendingLicenses(subscriptions);
    },
    ctx.config.EXPIRY_SWEEP_INTERVAL_MS,
    ctx.log,
  );
}

/** Stripe's signed events: checkout sessions paid, refunded or disputed, and subscriptions' changes. */
function stripeWebhookOf(
  ctx: CheckoutContext,
  stripe: StripeProvider,
  store: CheckoutStore,
  completion: Completion,
  stripeSubscriptions: Parameters<typeof applyStripeSubscriptionEvent>[0],
): StripeWebhook {
  const stripeRefunds = {
    ...stripeSubscriptions,
    async refundCheckout(sessionId: string, requestId: string) {
      const s = await store.findById(sessionId);
      if (s) await completion.refund(s, requestId);
    },
  };
  return new StripeWebhook(
    stripe,
    store,
    completion,
    ctx.outbox,
    ctx.clock,
    ctx.log,
    undefined,
    (a, requestId) => applyStripeRefund(stripeRefunds, a, requestId),
    (a, event, requestId) => applyStripeSubscriptionEvent(stripeSubscriptions, a, event, requestId),
  );
}

export const checkoutService: ServiceRecipe<typeof checkoutSchema> = {
  name: 'checkout',
  schema: checkoutSchema,
  migrations: [pendingExpiryMigration],
  async setup(ctx) {
    const { provider, stripe, notConfigured } = paymentProviderOf(ctx);
    const store = new CheckoutStore(checkoutModels(ctx.db));
    const products = createClient(
      ProductServiceClient,
      ctx.config.PRODUCT_GRPC_ADDR,
      internalCredential('checkout', ctx.config, ctx.tracing),
    );
    const licenses = createClient(
      LicenseServiceClient,
      ctx.config.LICENSE_GRPC_ADDR,
      internalCredential('checkout', ctx.config, ctx.tracing),
    );
    const subs = new SubscriptionStore(subscriptionModels(ctx.db));
    ctx.outbox.track(subs.models.Subscription);
    const subscriptions: SubscriptionDeps = {
      subs,
      outbox: ctx.outbox,
      clock: ctx.clock,
      licenses: licenses.call,
      provider,
      sessions: store,
      baseUrl: ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, ''),
      log: ctx.log,
    };
    const stripeSubscriptions = { ...subscriptions, products: products.call };
    const completion = new Completion(
      store,
      licenses.call,
      ctx.outbox,
      ctx.clock,
      ctx.log,
      async (s, key, requestId) => {
        const sub = await startSubscription(subscriptions, s, key, requestId);
        // Stripe events about it that came first (a renewal before the creation) apply now.
        if (sub.provider === 'stripe') await applyPending(stripeSubscriptions, sub, requestId);
      },
    );
    const sweeper = new CheckoutExpirySweeper(store, ctx.outbox, ctx.clock, completion);
    const expiry = expirySweep(ctx, sweeper, subscriptions);
    ctx.outbox.track(store.models.Session);
    const sessions = {
      store,
      outbox: ctx.outbox,
      clock: ctx.clock,
      products: products.call,
      provider,
      baseUrl: ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, ''),
    };
    ctx.grpc.add(
      CheckoutServiceService,
      checkoutHandlers(sessions, ctx.config.NODE_ENV === 'production', subs),
      checkoutAccess,
    );
    ctx.grpc.add(SubscriptionServiceService, subscriptionHandlers(subscriptions), subscriptionAccess);
    ctx.grpc.add(
      CheckoutPageServiceService,
      checkoutPageHandlers({ store, completion, provider, clock: ctx.clock }, subscriptions),
      checkoutPageAccess,
    );
    const stripeWebhook = stripe ? stripeWebhookOf(ctx, stripe, store, completion, stripeSubscriptions) : undefined;
    // Stripe's webhook only: the hosted page is the web component's, over CheckoutPageService.
    const page = stripeWebhookApp({ stripeWebhook, paymentsNotConfigured: notConfigured, log: ctx.log });
    const http = await listen(page, ctx.config.HTTP_HOST, ctx.config.HTTP_PORT);
    expiry.start();
    return async () => {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await expiry.stop();
      products.close();
      licenses.close();
    };
  },
};

export const start = (opts?: StartOptions<CheckoutConfig>) => startService(checkoutService, opts);

if (require.main === module) runMain('checkout-service', () => start());
