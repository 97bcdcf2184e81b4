import { AppError, checkEmail, idempotent, isId, newId, type CallOptions, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { CheckoutServiceService, CheckoutSession, GetProductRequest, Product } from '@licensing/proto';
import { checkMetadata } from '../domain/metadata';
import { checkExpire, checkRedirectUrl, effectiveStatus, expiryMinutes, sessionStatuses, type SessionStatus } from '../domain/session';
import { checkoutCreated, checkoutExpired } from '../events/checkout-events';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore } from '../store/queries';
import type { CheckoutConfig } from '../config';
import type { PaymentProvider } from '../domain/payments';

export interface ProductLookup {
  getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product>;
}

export function checkoutHandlers(ctx: ServiceContext<CheckoutConfig>, store: CheckoutStore, products: ProductLookup, provider: PaymentProvider): Handlers<typeof CheckoutServiceService> {
  const base = ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const httpsOnly = ctx.config.NODE_ENV === 'production';

  const toSession = (s: Omit<SessionDoc, 'outbox'>, now: Date): CheckoutSession => ({
    id: s._id,
    accountId: s.account_id,
    productId: s.product_id,
    status: effectiveStatus(s, now),
    amount: s.amount,
    currency: s.currency,
    customerEmail: s.customer_email,
    successUrl: s.success_url,
    cancelUrl: s.cancel_url,
    metadata: s.metadata ?? {},
    url: s.provider_url || `${base}/checkout/${s._id}`,
    expiresAt: s.expires_at.toISOString(),
    createdAt: s.created_at.toISOString(),
    licenseKey: s.license_key ?? '',
    livemode: s.livemode ?? false,
  });

  async function find(accountId: string, id: string): Promise<SessionDoc> {
    const s = isId('cs', id) ? await store.find(accountId, id) : null;
    if (!s) throw AppError.notFound('checkout session');
    return s;
  }

  return {
    async createSession(req, call) {
      if (!isId('prod', req.productId)) throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      const input = {
        product_id: req.productId,
        customer_email: req.customerEmail ? checkEmail('customer_email', req.customerEmail) : '',
        success_url: checkRedirectUrl('success_url', req.successUrl, true, httpsOnly),
        cancel_url: checkRedirectUrl('cancel_url', req.cancelUrl, false, httpsOnly),
        metadata: checkMetadata(req.metadata),
        minutes: expiryMinutes(req.expiresInMinutes),
      };
      const run = async () => {
        const product = await products.getProduct({ accountId: req.accountId, id: req.productId }, { requestId: call.requestId });
        if (!product.price) throw AppError.invalid('product_id', 'this product has no price: set one (PATCH /api/v1/products/{id} {"price": {...}}) before selling it');
        const now = ctx.clock.now();
        const id = newId('cs');
        const expiresAt = new Date(now.getTime() + input.minutes * 60_000);
        // The provider's side first: a session is stored only once the buyer has somewhere to pay.
        const payment = await provider.start({
          sessionId: id,
          accountId: req.accountId,
          productName: product.name,
          amount: product.price.amount,
          currency: product.price.currency,
          customerEmail: input.customer_email,
          successUrl: input.success_url,
          cancelUrl: input.cancel_url,
          expiresAt,
          hostedPageUrl: `${base}/checkout/${id}`,
        });
        const doc: Omit<SessionDoc, 'outbox'> = {
          _id: id,
          account_id: req.accountId,
          product_id: req.productId,
          product_name: product.name,
          status: 'open',
          amount: product.price.amount,
          currency: product.price.currency,
          customer_email: input.customer_email,
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
          refund_action: product.policy?.refundAction === 'suspend' ? 'suspend' : 'revoke',
          paid_with: null,
          refunded_at: null,
        };
        await store.insert(doc, [checkoutCreated(doc)]);
        ctx.outbox.flush(store.models.Session, doc._id);
        return toSession(doc, now);
      };
      if (!req.idempotencyKey) return run();
      return idempotent(store.models.Idempotency, `${req.accountId}:create_checkout`, req.idempotencyKey, input, run, ctx.clock.now());
    },

    async getSession(req) {
      return toSession(await find(req.accountId, req.id), ctx.clock.now());
    },

    async listSessions(req) {
      if (req.status && !sessionStatuses.includes(req.status as SessionStatus)) throw AppError.invalid('status', `status must be one of ${sessionStatuses.join(', ')}`);
      const now = ctx.clock.now();
      const { items, page } = await store.list(req.accountId, req.status as SessionStatus | '', req.page, now);
      return { data: items.map((s) => toSession(s, now)), page };
    },

    async expireSession(req) {
      const s = await find(req.accountId, req.id);
      const now = ctx.clock.now();
      checkExpire(s, now);
      // Stripe's session is expired first, so the buyer can no longer pay there; if they just did, 409.
      if (s.status === 'open' && s.provider === 'stripe' && s.provider_session_id && !(await provider.cancel(s.provider_session_id))) {
        throw new AppError('conflict', 'the checkout session was just paid on Stripe: it cannot be expired');
      }
      if (s.status === 'open' && (await store.markExpired(s._id, checkoutExpired(s, now)))) ctx.outbox.flush(store.models.Session, s._id);
      return toSession(await find(req.accountId, req.id), now);
    },
  };
}
