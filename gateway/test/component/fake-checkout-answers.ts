import {
  CheckoutServiceService,
  CheckoutSession,
  policyToContract,
  Product,
  SubscriptionServiceService,
  type ProductServiceService,
  type Subscription,
} from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';
import { checkPolicy } from '../../../services/product/src/domain/policy';
import { checkPrice, priceToContract } from '../../../services/product/src/domain/price';
import { checkNewSession } from '../../../services/checkout/src/use-cases/create-session';
import { checkAdvanceTo, checkQuantity } from '../../../services/checkout/src/domain/subscription';
import { effectiveStatus } from '../../../services/checkout/src/domain/session';

// What the product and checkout services answer about priced products and checkout sessions, for a few
// of them held here, judged by the services' own rules (their domain modules: a price's fields, a
// policy, a session request, seats), so the gateway under test sees what it would see from the real
// services, refusals included.

/** Where the fake checkout service says its hosted pages are (the real one: PUBLIC_BASE_URL). */
export const CHECKOUT_BASE_URL = 'https://licensing.example';

/** CreateProduct, UpdateProduct, GetProduct and ListProducts over `products`, prices and policies checked. */
export function pricedProductHandlers(products: Product[]): FakeHandlers<typeof ProductServiceService> {
  const find = (account_id: string, id: string) => {
    const found = products.find((p) => p.id === id && p.account_id === account_id);
    if (!found) throw new AppError('not_found', `product ${id} not found`);
    return found;
  };
  return {
    createProduct: (req) => {
      const product = Product.fromPartial({
        id: newId('prod'),
        account_id: req.account_id,
        name: req.name.trim(),
        description: req.description,
        created_at: new Date().toISOString(),
        policy: policyToContract(checkPolicy(req.policy)),
        price: req.price ? priceToContract(checkPrice(req.price)) : undefined,
        email_on_purchase: req.email_on_purchase ?? true,
      });
      products.push(product);
      return product;
    },
    updateProduct: (req) => {
      const product = find(req.account_id, req.id);
      if (req.price && req.remove_price) throw AppError.invalid('price', 'give a price or null, not both');
      if (req.policy) product.policy = policyToContract(checkPolicy(req.policy));
      if (req.price) product.price = priceToContract(checkPrice(req.price));
      else if (req.remove_price) product.price = undefined;
      return product;
    },
    getProduct: ({ account_id, id }) => find(account_id, id),
    listProducts: ({ account_id }) => ({
      data: products.filter((p) => p.account_id === account_id),
      page: { has_more: false, next_cursor: '' },
    }),
  };
}

/**
 * CreateSession (checked as the checkout service checks it, priced from `products`, Idempotency-Key
 * honoured), GetSession, ExpireSession and ListSessions over `sessions`.
 */
export function checkoutSessionHandlers(
  products: Product[],
  sessions: CheckoutSession[],
): FakeHandlers<typeof CheckoutServiceService> {
  const keyed = new Map<string, { input: string; session: CheckoutSession }>();
  const find = (account_id: string, id: string) => {
    const found = sessions.find((s) => s.id === id && s.account_id === account_id);
    if (!found) throw new AppError('not_found', `checkout session ${id} not found`);
    return found;
  };
  const seen = (s: CheckoutSession) => ({
    ...s,
    status: effectiveStatus({ status: s.status as never, expires_at: new Date(s.expires_at) }, new Date()),
  });
  return {
    createSession: (req) => {
      const input = checkNewSession(req, false);
      const earlier = req.idempotency_key ? keyed.get(`${req.account_id}:${req.idempotency_key}`) : undefined;
      if (earlier && earlier.input !== JSON.stringify(input))
        throw new AppError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request');
      if (earlier) return earlier.session;
      const product = products.find((p) => p.id === input.product_id && p.account_id === req.account_id);
      if (!product) throw new AppError('not_found', `product ${input.product_id} not found`);
      if (!product.price) throw AppError.invalid('product_id', 'this product has no price: set one before selling it');
      const quantity = checkQuantity(input.quantity, !!product.price.interval);
      const id = newId('cs');
      const now = new Date();
      const session = CheckoutSession.fromPartial({
        id,
        account_id: req.account_id,
        product_id: product.id,
        status: 'open',
        amount: product.price.amount * quantity,
        currency: product.price.currency,
        customer_email: input.customer_email,
        success_url: input.success_url,
        cancel_url: input.cancel_url,
        metadata: input.metadata,
        url: `${CHECKOUT_BASE_URL}/checkout/${id}`,
        expires_at: new Date(now.getTime() + input.minutes * 60_000).toISOString(),
        created_at: now.toISOString(),
        quantity,
      });
      sessions.push(session);
      if (req.idempotency_key)
        keyed.set(`${req.account_id}:${req.idempotency_key}`, { input: JSON.stringify(input), session });
      return session;
    },
    getSession: ({ account_id, id }) => seen(find(account_id, id)),
    expireSession: ({ account_id, id }) => {
      const s = find(account_id, id);
      if (s.status === 'complete') throw new AppError('conflict', 'the checkout session is complete');
      s.status = 'expired';
      return s;
    },
    listSessions: ({ account_id, status }) => ({
      data: sessions
        .filter((s) => s.account_id === account_id)
        .map(seen)
        .filter((s) => !status || s.status === status),
      page: { has_more: false, next_cursor: '' },
    }),
  };
}

/**
 * The subscriptions of a fake checkout service (SubscriptionService, served at the checkout service's
 * address with CheckoutService: `checkoutAndSubscriptions`): read, listed with the service's filters,
 * cancelled (409 once canceled), a billing portal link, and the test clock checked as the service
 * checks it. `changed` is called with each subscription changed: what the licence service then does to
 * its licence (the test's part).
 */
export function subscriptionHandlers(
  subscriptions: Subscription[],
  changed: (s: Subscription) => void,
): FakeHandlers<typeof SubscriptionServiceService> {
  const find = (account_id: string, id: string) => {
    const found = subscriptions.find((s) => s.id === id && s.account_id === account_id);
    if (!found) throw new AppError('not_found', `subscription ${id} not found`);
    return found;
  };
  return {
    getSubscription: ({ account_id, id }) => find(account_id, id),
    listSubscriptions: ({ account_id, status, product_id, customer_email }) => ({
      data: subscriptions.filter(
        (s) =>
          s.account_id === account_id &&
          (!status || s.status === status) &&
          (!product_id || s.product_id === product_id) &&
          (!customer_email || s.customer_email.toLowerCase() === customer_email.toLowerCase()),
      ),
      page: { has_more: false, next_cursor: '' },
    }),
    cancelSubscription: ({ account_id, id, at_period_end }) => {
      const s = find(account_id, id);
      if (s.status === 'canceled') throw new AppError('conflict', 'the subscription is already canceled');
      if (at_period_end) s.cancel_at_period_end = true;
      else Object.assign(s, { status: 'canceled', canceled_at: new Date().toISOString() });
      changed(s);
      return s;
    },
    createBillingPortal: ({ account_id, id }) => {
      const s = find(account_id, id);
      return {
        url: `${CHECKOUT_BASE_URL}/checkout/${s.checkout_session_id}/billing/${'t'.repeat(43)}`,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      };
    },
    advanceTestClock: ({ account_id, id, advance_to }) => {
      const s = find(account_id, id);
      if (s.livemode) throw new AppError('conflict', 'a live subscription has no test clock');
      const to = checkAdvanceTo(advance_to, new Date(s.test_clock));
      s.test_clock = to.toISOString();
      if (s.cancel_at_period_end && to >= new Date(s.current_period_end))
        Object.assign(s, { status: 'canceled', canceled_at: s.current_period_end });
      changed(s);
      return s;
    },
  };
}

/** One service definition of both: the checkout service serves them at one address. */
export const checkoutAndSubscriptions = { ...CheckoutServiceService, ...SubscriptionServiceService };
