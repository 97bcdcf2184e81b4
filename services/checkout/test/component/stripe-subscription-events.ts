import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { checkResponse } from '../../../../test/support/openapi';
import { stripeOverrides } from '../../../../test/support/stack';
import { startCheckout, type RunningCheckout } from './running-checkout';

// The Stripe subscription tests' shared part: the checkout service started against stripe-mock through
// a recorder (so a test sees what was asked of Stripe, and can make Stripe unreachable), and the
// events Stripe would send about a subscription sold through Stripe Checkout, signed with the
// endpoint's secret and delivered to the service's webhook receiver (stripe-mock sends none).

export const WEBHOOK_SECRET = 'whsec_licensingTestSecretForStripeMock0001';
export const DAY_S = 86_400;
const stripe = new Stripe('sk_test_unused'); // only its webhook helpers are used here

export interface StripeRecorder {
  /** What was asked of Stripe, in order. */
  toStripe: { method: string; path: string; body: string }[];
  /** Stripe unreachable while true: the recorder drops every connection. */
  down: boolean;
  url: string;
  stop(): Promise<void>;
}

async function startRecorder(target: string): Promise<StripeRecorder> {
  const to = new URL(target);
  const state = { toStripe: [] as StripeRecorder['toStripe'], down: false };
  const server: Server = createServer((req, res) => {
    if (state.down) return void req.socket.destroy();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      state.toStripe.push({ method: req.method ?? '', path: req.url ?? '', body: body.toString('utf8') });
      const out = request(
        {
          host: to.hostname,
          port: to.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: to.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', () => res.writeHead(502).end());
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  });
}

/** The checkout service with Stripe (stripe-mock behind the recorder), its sweep running often. */
export async function startStripeCheckout(): Promise<{ c: RunningCheckout; stripeApi: StripeRecorder }> {
  const overrides = stripeOverrides(WEBHOOK_SECRET);
  const stripeApi = await startRecorder(overrides.stripeApiUrl!);
  const c = await startCheckout({
    topology: { ...overrides, stripeApiUrl: stripeApi.url, expirySweepIntervalMs: 250 },
  });
  return { c, stripeApi };
}

let seq = 0;
const eventId = () => `evt_sub_${Date.now().toString(36)}${(seq++).toString(36)}`;
export const now = () => Math.floor(Date.now() / 1000);

/** One signed delivery to the service's webhook receiver; the answer checked against the OpenAPI document. */
export async function deliver(c: RunningCheckout, event: Record<string, unknown>) {
  const payload = JSON.stringify(event);
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
  const res = await fetch(c.webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header },
    body: payload,
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : text;
  checkResponse('POST', '/webhooks/stripe', res.status, res.headers.get('content-type') ?? '', body);
  return { status: res.status, body };
}

export const envelope = (type: string, object: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
  id: eventId(),
  object: 'event',
  api_version: '2025-01-27.acacia',
  created: now(),
  livemode: false,
  type,
  data: { object: { livemode: false, ...object } },
  ...over,
});

export interface Sold {
  id: string;
  stripeSession: string;
  stripeSub: string;
}

/** A new session of `product` (Stripe Checkout): our id, Stripe's session id, the Stripe subscription it will start. */
export async function sell(c: RunningCheckout, account: string, product: string, quantity = 1): Promise<Sold> {
  const s = await c.api.createSession(c.sessionRequest(account, product, quantity > 1 ? { quantity } : {}));
  const db = await c.db();
  const doc = await db.collection('checkout_sessions').findOne({ _id: s.id as never });
  return {
    id: s.id,
    stripeSession: doc!.provider_session_id as string,
    stripeSub: `sub_stripe${seq++}${s.id.slice(-8)}`,
  };
}

export const completed = (s: Sold, amount: number, customer?: string) =>
  envelope('checkout.session.completed', {
    ...(customer ? { customer } : {}),
    id: s.stripeSession,
    object: 'checkout.session',
    client_reference_id: s.id,
    metadata: { checkout_session_id: s.id },
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    subscription: s.stripeSub,
    amount_total: amount,
    currency: 'eur',
    customer_details: { email: 'stripe-subscriber@example.com' },
  });

export const invoice = (
  type: 'invoice.paid' | 'invoice.payment_failed',
  s: Sold,
  id: string,
  period: { start: number; end: number },
  amount = 1000,
  reason = 'subscription_cycle',
  currency = 'eur',
  customer?: string,
) =>
  envelope(type, {
    id,
    object: 'invoice',
    subscription: s.stripeSub,
    subscription_details: { metadata: { checkout_session_id: s.id } },
    billing_reason: reason,
    payment_intent: `pi_${id}`,
    amount_paid: type === 'invoice.paid' ? amount : 0,
    amount_due: amount,
    currency,
    lines: { data: [{ period, metadata: {} }] },
    ...(customer ? { customer } : {}),
  });

export const subscriptionEvent = (
  type: string,
  s: Sold,
  over: Record<string, unknown> = {},
  item: Record<string, unknown> = {},
) =>
  envelope(type, {
    id: s.stripeSub,
    object: 'subscription',
    status: 'active',
    cancel_at_period_end: false,
    metadata: { checkout_session_id: s.id },
    items: { data: [{ quantity: 1, price: { metadata: {} }, ...item }] },
    ...over,
  });

/** The subscription a sold session started, as the gateway reads it. */
export async function subOf(c: RunningCheckout, account: string, s: Sold) {
  const id = (await c.api.getSession({ account_id: account, id: s.id })).subscription_id ?? '';
  if (!/^sub_[0-9A-Z]{26}$/.test(id)) throw new Error(`session ${s.id} started no subscription (${id})`);
  return c.subs.getSubscription({ account_id: account, id });
}

/** The Stripe customer stored with a subscription (internal: in no answer). */
export async function storedCustomer(c: RunningCheckout, id: string) {
  const db = await c.db();
  const doc = await db.collection('subscriptions').findOne({ _id: id as never });
  return doc?.provider_customer_id as string | undefined;
}

/** The subscription.* events of one subscription on the stream. */
export const ofSub = (c: RunningCheckout, type: string, id: string) =>
  c.events
    .all()
    .filter((e) => e.type === type && (e.data as { subscription?: { id: string } }).subscription?.id === id);
