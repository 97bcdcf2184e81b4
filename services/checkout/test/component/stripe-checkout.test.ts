import Stripe from 'stripe';
import { connect } from 'nats';
import { newId } from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';
import { checkResponse } from '../../../../test/support/openapi';
import { stripeOverrides } from '../../../../test/support/stack';
import { startCheckout, type RunningCheckout } from './running-checkout';

// Checkout through Stripe, in the checkout service alone against stripe-mock (started by the jest
// globalSetup), real FerretDB and NATS, the product and licence services faked. stripe-mock answers
// the API calls but stores nothing and sends no webhooks, so the tests sign the events Stripe would
// send with the endpoint's secret and deliver them to the service's webhook receiver, as the gateway
// passes them on (gateway/test/component/stripe-webhook-routes.test.ts). Each answer is checked
// against the OpenAPI document's /webhooks/stripe. The purchase mail that follows checkout.completed is
// the notification service's; the hosted page's redirect to Stripe is the web component's.

const WEBHOOK_SECRET = 'whsec_licensingTestSecretForStripeMock0001';
const stripe = new Stripe('sk_test_unused'); // only its webhook helpers are used here
const account = newId('acct');
let c: RunningCheckout;
let productId: string;
let suspendingProductId: string;

beforeAll(async () => {
  c = await startCheckout({ topology: stripeOverrides(WEBHOOK_SECRET) });
  productId = c.product(account, { amount: 4900, currency: 'EUR' }).id;
  suspendingProductId = c.product(account, { amount: 9900, currency: 'EUR' }, { refund_action: 'suspend' }).id;
});

afterAll(async () => {
  await c?.stop();
});

interface Ours {
  id: string;
  url: string;
  livemode: boolean;
  /** Stripe's Checkout Session id, as the checkout service stored it. */
  stripeId: string;
  paymentIntent: string;
}

async function newSession(product = productId): Promise<Ours> {
  const s = await c.api.createSession(
    c.sessionRequest(account, product, { cancel_url: 'https://vendor.example/cart' }),
  );
  const db = await c.db();
  const doc = await db.collection('checkout_sessions').findOne({ _id: s.id as never });
  return { ...s, stripeId: doc!.provider_session_id as string, paymentIntent: `pi_${s.id.slice(3)}` };
}
const session = (id: string) => c.api.getSession({ account_id: account, id });

let eventSeq = 0;
const eventId = () => `evt_test_${Date.now().toString(36)}${(eventSeq++).toString(36)}`;

/** A Stripe event as Stripe would send it for one of our sessions. */
function sessionEvent(type: string, s: Ours, over: Record<string, unknown> = {}, id = eventId()) {
  return {
    id,
    object: 'event',
    api_version: '2025-01-27.acacia',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    type,
    data: {
      object: {
        id: s.stripeId,
        object: 'checkout.session',
        client_reference_id: s.id,
        metadata: { checkout_session_id: s.id },
        mode: 'payment',
        status: type === 'checkout.session.expired' ? 'expired' : 'complete',
        payment_status: type === 'checkout.session.expired' ? 'unpaid' : 'paid',
        payment_intent: s.paymentIntent,
        customer_details: { email: 'buyer@example.com' },
        livemode: false,
        ...over,
      },
    },
  };
}

/** A chargeback, as Stripe sends it when the buyer's bank disputes the payment. */
const disputeEvent = (paymentIntent: string) => ({
  id: eventId(),
  object: 'event',
  created: Math.floor(Date.now() / 1000),
  livemode: false,
  type: 'charge.dispute.created',
  data: {
    object: {
      id: `dp_${paymentIntent.slice(3)}`,
      object: 'dispute',
      amount: 4900,
      charge: `ch_${paymentIntent.slice(3)}`,
      payment_intent: paymentIntent,
      reason: 'fraudulent',
      status: 'needs_response',
      livemode: false,
    },
  },
});

const refundEvent = (paymentIntent: string, refunded = true) => ({
  id: eventId(),
  object: 'event',
  created: Math.floor(Date.now() / 1000),
  livemode: false,
  type: 'charge.refunded',
  data: {
    object: {
      id: `ch_${paymentIntent.slice(3)}`,
      object: 'charge',
      payment_intent: paymentIntent,
      refunded,
      amount_refunded: 4900,
      livemode: false,
    },
  },
});

/** One delivery to the service's webhook receiver, signed like Stripe (or not). */
async function deliver(
  event: unknown,
  opts: { secret?: string; timestamp?: number; header?: string; indent?: number } = {},
) {
  // indent: the same event serialized otherwise (other bytes, same event id).
  const payload = JSON.stringify(event, null, opts.indent);
  const header =
    opts.header ??
    stripe.webhooks.generateTestHeaderString({
      payload,
      secret: opts.secret ?? WEBHOOK_SECRET,
      timestamp: opts.timestamp,
    });
  const res = await fetch(c.webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header },
    body: payload,
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : text;
  checkResponse('POST', '/webhooks/stripe', res.status, res.headers.get('content-type') ?? '', body);
  return { status: res.status, body, header };
}

/** The licences the (faked) licence service issued for a product. */
const licencesOf = (product: string) => c.issued.filter((l) => l.product_id === product);
const checkoutEvents = (type: string, id: string) =>
  c.events.all().filter((e) => e.type === type && (e.data as { checkout: { id: string } }).checkout.id === id);
const waitForCheckout = (type: string, id: string) =>
  c.events.waitFor((e) => e.type === type && (e.data as { checkout: { id: string } }).checkout.id === id);

/** Every event the service stored has reached the stream, and the log has read the whole stream. */
async function eventsSettled(): Promise<void> {
  const db = await c.db();
  const nc = await connect({ servers: c.t.natsUrl });
  const jsm = await nc.jetstreamManager();
  try {
    await eventually(
      async () => {
        // An event stays in its document's outbox a while after it is published (the outbox clears it
        // late, runtime outbox.ts): stored means on the stream once the log has it.
        const read = new Set(c.events.all().map((e) => e.id));
        const stored = (await db.collection('checkout_sessions').find({ outbox_pending: true }).toArray()).flatMap(
          (d) => Object.keys((d.outbox ?? {}) as Record<string, unknown>),
        );
        const pending = stored.filter((id) => !read.has(id)).length;
        const inStream = (await jsm.streams.info(c.t.stream)).state.messages;
        if (pending !== 0 || c.events.all().length < inStream)
          throw new Error(
            `events did not settle: ${pending} stored events not read, ${c.events.all().length} of ${inStream} read`,
          );
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  } finally {
    await nc.close();
  }
}

describe('creating a session', () => {
  it('creates a Stripe Checkout Session and sends the buyer to Stripe; livemode is false with a test key', async () => {
    const s = await newSession();
    expect(s.url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(s.livemode).toBe(false);
    expect(s.stripeId).toMatch(/^cs_test_/);
    const created = await waitForCheckout('checkout.created', s.id);
    expect((created.data as { checkout: { livemode: boolean } }).checkout.livemode).toBe(false);
    // The hosted page of a Stripe session sends the buyer to Stripe (the web component redirects there); it never takes a card.
    const page = await c.pages.getPage({ session_id: s.id, receipt: '', issue_form_token: true });
    expect(page).toMatchObject({
      state: 'open',
      session: { provider: 'stripe', provider_url: s.url, takes_cards: false },
    });
  });

  it('expiring a session expires it on Stripe too', async () => {
    const s = await newSession();
    expect(await c.api.expireSession({ account_id: account, id: s.id })).toMatchObject({
      status: 'expired',
      livemode: false,
    });
  });
});

describe('the webhook', () => {
  it('checkout.session.completed issues the licence, records it and publishes checkout.completed with livemode', async () => {
    const s = await newSession();
    const before = licencesOf(productId).length;
    const res = await deliver(sessionEvent('checkout.session.completed', s, { amount_total: 4900, currency: 'eur' }));
    expect(res).toMatchObject({ status: 200, body: { received: true } });
    const paid = await session(s.id);
    expect(paid).toMatchObject({
      status: 'complete',
      customer_email: 'buyer@example.com',
      livemode: false,
      license_key: expect.stringMatching(/^[0-9A-Z]{5}(-[0-9A-Z]{5}){5}$/),
    });
    expect(licencesOf(productId).length).toBe(before + 1);
    const event = await waitForCheckout('checkout.completed', s.id);
    expect(event.data).toMatchObject({
      license_key: paid.license_key,
      customer_email: 'buyer@example.com',
      checkout: { status: 'complete', livemode: false },
    });
    // Nobody sees the key on the hosted page: only "already paid".
    expect(await c.pages.getPage({ session_id: s.id, receipt: '', issue_form_token: true })).toMatchObject({
      state: 'complete',
      license_key: '',
    });
  });

  it('refuses a bad signature, a stale timestamp, an unknown session and a mismatched Stripe session, issuing nothing', async () => {
    const s = await newSession();
    const before = licencesOf(productId).length;
    const event = sessionEvent('checkout.session.completed', s);
    const refusals = [
      await deliver(event, { secret: 'whsec_someoneElsesSecret000000000000' }),
      await deliver(event, { header: 't=1,v1=00' }),
      await deliver(event, { header: '' }),
      await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 400 }),
      await deliver(event, { timestamp: Math.floor(Date.now() / 1000) + 400 }),
    ];
    expect(refusals.map((r) => r.status)).toEqual([400, 400, 400, 400, 400]);
    // A body changed after signing no longer matches its signature.
    const signed = await deliver(event, {
      header: stripe.webhooks.generateTestHeaderString({
        payload: JSON.stringify(event).replace('buyer@', 'thief@'),
        secret: WEBHOOK_SECRET,
      }),
    });
    expect(signed.status).toBe(400);
    const unknown = await deliver(
      sessionEvent('checkout.session.completed', { ...s, id: 'cs_01M82BCFGS21FWB5Z5A498AR3N' }),
    );
    expect(unknown.status).toBe(404);
    const otherStripeSession = await deliver(
      sessionEvent('checkout.session.completed', { ...s, stripeId: 'cs_test_notTheOneWeCreated' }),
    );
    expect(otherStripeSession.status).toBe(400);
    const wrongAmount = await deliver(
      sessionEvent('checkout.session.completed', s, { amount_total: 100, currency: 'eur' }),
    );
    expect(wrongAmount.status).toBe(400);
    const live = await deliver({ ...sessionEvent('checkout.session.completed', s), livemode: true });
    expect(live.status).toBe(400);
    expect(await session(s.id)).toMatchObject({ status: 'open', license_key: '' });
    expect(licencesOf(productId).length).toBe(before);
  });

  it('a replay (the same signed request again) is refused, and a repeated event does nothing: one licence, one event', async () => {
    const s = await newSession();
    const event = sessionEvent('checkout.session.completed', s);
    const first = await deliver(event);
    expect(first.status).toBe(200);
    const key = (await session(s.id)).license_key;
    const count = licencesOf(productId).length;
    const replay = await deliver(event, { header: first.header });
    expect(replay.status).toBe(409);
    expect(replay.body.code).toBe('conflict');
    // The same signature with another (made-up) signature beside it still verifies: a replay all the same.
    const rewritten = await deliver(event, { header: `${first.header},v1=${'0'.repeat(64)}` });
    expect(rewritten.status).toBe(409);
    // Stripe's own retry of the same event carries a new signature: acknowledged, nothing done.
    const retry = await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 30 });
    expect(retry).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
    await eventsSettled();
    expect(checkoutEvents('checkout.completed', s.id)).toHaveLength(1);
    expect(licencesOf(productId).length).toBe(count);
    expect((await session(s.id)).license_key).toBe(key);
  });

  it('ten concurrent deliveries of one event produce exactly one licence and one checkout.completed', async () => {
    const s = await newSession();
    const before = licencesOf(productId).length;
    const event = sessionEvent('checkout.session.completed', s);
    // As Stripe's retries: the same event, each delivery signed at its own time.
    const now = Math.floor(Date.now() / 1000);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => deliver(event, { timestamp: now - i })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    // A later retry of the same event is acknowledged as a duplicate and does nothing.
    expect((await deliver(event, { timestamp: now - 60 })).body).toEqual({ received: true, duplicate: true });
    expect(licencesOf(productId).length).toBe(before + 1);
    const paid = await session(s.id);
    expect(licencesOf(productId).map((l) => l.key)).toContain(paid.license_key);
    // Every issuance of it asked with the session's one key: the licence service issues one licence for it.
    const asked = c.licenses.requestsTo('createLicense').filter((r) => r.idempotency_key === `checkout:${s.id}`);
    expect(asked.length).toBeGreaterThan(0);
    await waitForCheckout('checkout.completed', s.id);
    await eventsSettled();
    expect(checkoutEvents('checkout.completed', s.id)).toHaveLength(1);
  });

  it('the event id counts: deliveries of one event with other bytes and signatures, at once, handle it once', async () => {
    const s = await newSession();
    const before = licencesOf(productId).length;
    const event = sessionEvent('checkout.session.completed', s);
    const now = Math.floor(Date.now() / 1000);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => deliver(event, { timestamp: now - i, indent: i % 3 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    // One delivery handled it; each other one found it handled (or being handled) and did nothing.
    expect(results.filter((r) => !r.body.duplicate)).toHaveLength(1);
    expect(licencesOf(productId).length).toBe(before + 1);
    await eventsSettled();
    expect(checkoutEvents('checkout.completed', s.id)).toHaveLength(1);
  });

  it('checkout.session.expired expires the open session once; events for other Stripe objects are acknowledged and ignored', async () => {
    const s = await newSession();
    expect((await deliver(sessionEvent('checkout.session.expired', s))).status).toBe(200);
    expect((await session(s.id)).status).toBe('expired');
    const expired = await waitForCheckout('checkout.expired', s.id);
    expect((expired.data as { checkout: { livemode: boolean } }).checkout.livemode).toBe(false);
    const foreign = await deliver(
      sessionEvent('checkout.session.completed', s, { metadata: {}, client_reference_id: null }),
    );
    expect(foreign.body).toMatchObject({ received: true, ignored: expect.any(String) });
    const other = await deliver({
      id: eventId(),
      object: 'event',
      type: 'customer.created',
      livemode: false,
      created: 1,
      data: { object: { id: 'cus_1' } },
    });
    expect(other.body).toMatchObject({ received: true, ignored: expect.any(String) });
  });

  it('a payment that completes after our own expiry still issues the licence (the buyer paid)', async () => {
    const s = await newSession();
    await deliver(sessionEvent('checkout.session.expired', s));
    expect((await session(s.id)).status).toBe('expired');
    expect((await deliver(sessionEvent('checkout.session.completed', s))).status).toBe(200);
    expect(await session(s.id)).toMatchObject({ status: 'complete', license_key: expect.any(String) });
    expect((await session(s.id)).license_key).not.toBe('');
  });
});

describe('refunds', () => {
  /** The licence's status, as the licence service holds it after the checkout service's TransitionLicense. */
  const licence = (key: string) => ({ status: c.issued.find((l) => l.key === key)?.status });
  const paidKey = async (s: Ours, over: Record<string, unknown> = {}) => {
    await deliver(sessionEvent('checkout.session.completed', s, over));
    return (await session(s.id)).license_key;
  };

  it('a full refund revokes the licence (the default policy); a partial refund changes nothing', async () => {
    const s = await newSession();
    const key = await paidKey(s);
    expect((await deliver(refundEvent(s.paymentIntent, false))).status).toBe(200);
    expect(licence(key).status).toBe('active');
    expect((await deliver(refundEvent(s.paymentIntent))).status).toBe(200);
    expect(licence(key).status).toBe('revoked');
    expect((await deliver(refundEvent(s.paymentIntent))).status).toBe(200); // a second refund event: still revoked, no error
  });

  it('with policy refund_action "suspend", a refund suspends the licence', async () => {
    const s = await newSession(suspendingProductId);
    const key = await paidKey(s, { amount_total: 9900, currency: 'eur' });
    await deliver(refundEvent(s.paymentIntent));
    expect(licence(key).status).toBe('suspended');
  });

  it('a chargeback (charge.dispute.created) revokes or suspends the licence as the refund policy says', async () => {
    const s = await newSession();
    const key = await paidKey(s);
    expect((await deliver(disputeEvent(s.paymentIntent))).status).toBe(200);
    expect(licence(key).status).toBe('revoked');
    // Disputed before its completion reached us: applied once the licence exists.
    const early = await newSession(suspendingProductId);
    expect((await deliver(disputeEvent(early.paymentIntent))).body).toEqual({ received: true });
    const earlyKey = await paidKey(early, { amount_total: 9900, currency: 'eur' });
    expect(licence(earlyKey).status).toBe('suspended');
  });

  it('a refund that arrives before the completion is applied once the licence exists', async () => {
    const s = await newSession();
    expect((await deliver(refundEvent(s.paymentIntent))).status).toBe(200);
    const key = await paidKey(s);
    expect(licence(key).status).toBe('revoked');
  });
});
