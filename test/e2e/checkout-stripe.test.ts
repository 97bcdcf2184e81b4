import { eventually } from '../support/eventually';
import Stripe from 'stripe';
import { connect } from 'nats';
import { connectMongo } from '@licensing/runtime';
import { client, startStack, stripeOverrides, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { mailsTo } from '../support/mailbox';
import { checkResponse } from '../support/openapi';
import { WebClient } from '../support/web-client';
import { start as startCheckout } from '../../services/checkout/src/main';
import { envFor } from '../../scripts/lib/topology';
import { freePort } from '../../scripts/lib/net';

// Checkout through Stripe, against stripe-mock (started by the jest globalSetup).
// stripe-mock answers the API calls but stores nothing and sends no webhooks,
// so the tests sign the events Stripe would send with the endpoint's secret.

const WEBHOOK_SECRET = 'whsec_licensingTestSecretForStripeMock0001';
const stripe = new Stripe('sk_test_unused'); // only its webhook helpers are used here
let stack: Stack;
let events: EventLog;
let api: ReturnType<typeof client>;
let productId: string;
let suspendingProductId: string;

beforeAll(async () => {
  stack = await startStack(stripeOverrides(WEBHOOK_SECRET));
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  productId = (await api('POST', '/api/v1/products', { name: 'Pixel Forge', price: { amount: 4900, currency: 'EUR' } }))
    .body.id;
  suspendingProductId = (
    await api('POST', '/api/v1/products', {
      name: 'Pixel Forge Team',
      price: { amount: 9900, currency: 'EUR' },
      policy: { refund_action: 'suspend' },
    })
  ).body.id;
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
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
  const res = await api('POST', '/api/v1/checkout', {
    product_id: product,
    success_url: 'https://vendor.example/thanks',
    cancel_url: 'https://vendor.example/cart',
  });
  expect(res.status).toBe(201);
  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
  const doc = await db.collection('checkout_sessions').findOne({ _id: res.body.id as never });
  await db.close();
  return { ...res.body, stripeId: doc!.provider_session_id as string, paymentIntent: `pi_${res.body.id.slice(3)}` };
}

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
function disputeEvent(paymentIntent: string) {
  return {
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
  };
}

function refundEvent(paymentIntent: string, refunded = true) {
  return {
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
  };
}

/** One delivery to the gateway's public endpoint, signed like Stripe (or not). */
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
  const res = await fetch(`${stack.url}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header },
    body: payload,
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : text;
  checkResponse('POST', '/webhooks/stripe', res.status, res.headers.get('content-type') ?? '', body);
  return { status: res.status, body, header };
}

const licencesOf = async (product: string) =>
  (await api('GET', `/api/v1/licenses?product_id=${product}&limit=100`)).body.data as { key: string; status: string }[];
const completedFor = (id: string) =>
  events
    .all()
    .filter((e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === id);

/** Every event the services stored has reached the stream, and this log has read the whole stream. */
async function eventsSettled(): Promise<void> {
  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
  const nc = await connect({ servers: stack.topology.natsUrl });
  const jsm = await nc.jetstreamManager();
  try {
    await eventually(
      async () => {
        const pending = await db.collection('checkout_sessions').countDocuments({ outbox_pending: true });
        const inStream = (await jsm.streams.info(stack.topology.stream)).state.messages;
        if (pending !== 0 || events.all().length < inStream)
          throw new Error(
            `events did not settle: ${pending} documents pending, ${events.all().length} of ${inStream} read`,
          );
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  } finally {
    await db.close();
    await nc.close();
  }
}

describe('creating a session', () => {
  it('creates a Stripe Checkout Session and sends the buyer to Stripe; livemode is false with a test key', async () => {
    const s = await newSession();
    expect(s.url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(s.livemode).toBe(false);
    expect(s.stripeId).toMatch(/^cs_test_/);
    const created = await events.waitFor(
      (e) => e.type === 'checkout.created' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
    );
    expect((created.data as { checkout: { livemode: boolean } }).checkout.livemode).toBe(false);
    // The hosted page of a Stripe session sends the buyer to Stripe; it never takes a card.
    const web = new WebClient(stack.url, stack.topology);
    const page = await web.get(`/checkout/${s.id}`);
    expect(page.status).toBe(303);
    expect(page.location).toBe(s.url);
  });

  it('expiring a session expires it on Stripe too', async () => {
    const s = await newSession();
    const res = await api('POST', `/api/v1/checkout/${s.id}/expire`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'expired', livemode: false });
  });
});

describe('the webhook', () => {
  it('checkout.session.completed issues the licence, records it and publishes checkout.completed with livemode', async () => {
    const s = await newSession();
    const before = (await licencesOf(productId)).length;
    const res = await deliver(sessionEvent('checkout.session.completed', s, { amount_total: 4900, currency: 'eur' }));
    expect(res).toMatchObject({ status: 200, body: { received: true } });
    const session = (await api('GET', `/api/v1/checkout/${s.id}`)).body;
    expect(session).toMatchObject({
      status: 'complete',
      customer_email: 'buyer@example.com',
      livemode: false,
      license_key: expect.stringMatching(/^[0-9A-Z]{5}(-[0-9A-Z]{5}){5}$/),
    });
    expect((await licencesOf(productId)).length).toBe(before + 1);
    const event = await events.waitFor(
      (e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
    );
    expect(event.data).toMatchObject({
      license_key: session.license_key,
      customer_email: 'buyer@example.com',
      checkout: { status: 'complete', livemode: false },
    });
    // The buyer gets the purchase e-mail with the key, as after a test-mode payment (the stack's mail folder).
    await eventually(
      async () =>
        expect(
          (await mailsTo(stack.topology, 'buyer@example.com')).some((m) => m.text.includes(session.license_key)),
        ).toBe(true),
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    // Nobody sees the key on the hosted page: only "already paid".
    const page = await new WebClient(stack.url, stack.topology).get(`/checkout/${s.id}`);
    expect(page.status).toBe(409);
    expect(page.html).toContain('Already paid');
    expect(page.html).not.toContain(session.license_key);
  });

  it('refuses a bad signature, a stale timestamp, an unknown session and a mismatched Stripe session, issuing nothing', async () => {
    const s = await newSession();
    const before = (await licencesOf(productId)).length;
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
    expect((await api('GET', `/api/v1/checkout/${s.id}`)).body).toMatchObject({ status: 'open', license_key: null });
    expect((await licencesOf(productId)).length).toBe(before);
  });

  it('a replay (the same signed request again) is refused, and a repeated event does nothing: one licence, one event', async () => {
    const s = await newSession();
    const event = sessionEvent('checkout.session.completed', s);
    const first = await deliver(event);
    expect(first.status).toBe(200);
    const key = (await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key;
    const count = (await licencesOf(productId)).length;
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
    expect(completedFor(s.id)).toHaveLength(1);
    expect((await licencesOf(productId)).length).toBe(count);
    expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key).toBe(key);
  });

  it('ten concurrent deliveries of one event produce exactly one licence and one checkout.completed', async () => {
    const s = await newSession();
    const before = (await licencesOf(productId)).length;
    const event = sessionEvent('checkout.session.completed', s);
    // As Stripe's retries: the same event, each delivery signed at its own time.
    const now = Math.floor(Date.now() / 1000);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => deliver(event, { timestamp: now - i })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    // A later retry of the same event is acknowledged as a duplicate and does nothing.
    expect((await deliver(event, { timestamp: now - 60 })).body).toEqual({ received: true, duplicate: true });
    expect((await licencesOf(productId)).length).toBe(before + 1);
    const session = (await api('GET', `/api/v1/checkout/${s.id}`)).body;
    expect((await licencesOf(productId)).map((l) => l.key)).toContain(session.license_key);
    await events.waitFor(
      (e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
    );
    await eventsSettled();
    expect(completedFor(s.id)).toHaveLength(1);
    expect(
      events
        .all()
        .filter(
          (e) =>
            e.type === 'license.created' &&
            (e.data as { license: { key: string } }).license.key === session.license_key,
        ),
    ).toHaveLength(1);
  });

  it('the event id counts: deliveries of one event with other bytes and signatures, at once, handle it once', async () => {
    const s = await newSession();
    const before = (await licencesOf(productId)).length;
    const event = sessionEvent('checkout.session.completed', s);
    const now = Math.floor(Date.now() / 1000);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => deliver(event, { timestamp: now - i, indent: i % 3 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    // One delivery handled it; each other one found it handled (or being handled) and did nothing.
    expect(results.filter((r) => !r.body.duplicate)).toHaveLength(1);
    expect((await licencesOf(productId)).length).toBe(before + 1);
    await eventsSettled();
    expect(completedFor(s.id)).toHaveLength(1);
  });

  it('checkout.session.expired expires the open session once; events for other Stripe objects are acknowledged and ignored', async () => {
    const s = await newSession();
    expect((await deliver(sessionEvent('checkout.session.expired', s))).status).toBe(200);
    expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.status).toBe('expired');
    const expired = await events.waitFor(
      (e) => e.type === 'checkout.expired' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
    );
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
    expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.status).toBe('expired');
    expect((await deliver(sessionEvent('checkout.session.completed', s))).status).toBe(200);
    expect((await api('GET', `/api/v1/checkout/${s.id}`)).body).toMatchObject({
      status: 'complete',
      license_key: expect.any(String),
    });
  });
});

describe('refunds', () => {
  const licence = async (key: string) => (await api('GET', `/api/v1/licenses/${key}`)).body as { status: string };

  it('a full refund revokes the licence (the default policy); a partial refund changes nothing', async () => {
    const s = await newSession();
    await deliver(sessionEvent('checkout.session.completed', s));
    const key = (await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key as string;
    expect((await deliver(refundEvent(s.paymentIntent, false))).status).toBe(200);
    expect((await licence(key)).status).toBe('active');
    expect((await deliver(refundEvent(s.paymentIntent))).status).toBe(200);
    expect((await licence(key)).status).toBe('revoked');
    expect((await deliver(refundEvent(s.paymentIntent))).status).toBe(200); // a second refund event: still revoked, no error
  });

  it('with policy refund_action "suspend", a refund suspends the licence', async () => {
    const s = await newSession(suspendingProductId);
    await deliver(sessionEvent('checkout.session.completed', s));
    const key = (await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key as string;
    await deliver(refundEvent(s.paymentIntent));
    expect((await licence(key)).status).toBe('suspended');
  });

  it('a chargeback (charge.dispute.created) revokes or suspends the licence as the refund policy says', async () => {
    const s = await newSession();
    await deliver(sessionEvent('checkout.session.completed', s));
    const key = (await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key as string;
    expect((await deliver(disputeEvent(s.paymentIntent))).status).toBe(200);
    expect((await licence(key)).status).toBe('revoked');
    // Disputed before its completion reached us: applied once the licence exists.
    const early = await newSession(suspendingProductId);
    expect((await deliver(disputeEvent(early.paymentIntent))).body).toEqual({ received: true });
    await deliver(sessionEvent('checkout.session.completed', early, { amount_total: 9900, currency: 'eur' }));
    const earlyKey = (await api('GET', `/api/v1/checkout/${early.id}`)).body.license_key as string;
    expect((await licence(earlyKey)).status).toBe('suspended');
  });

  it('a refund that arrives before the completion is applied once the licence exists', async () => {
    const s = await newSession();
    expect((await deliver(refundEvent(s.paymentIntent))).status).toBe(200);
    await deliver(sessionEvent('checkout.session.completed', s));
    const key = (await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key as string;
    expect((await licence(key)).status).toBe('revoked');
  });
});

describe('modes', () => {
  const checkoutEnv = async (over: Record<string, string>) => ({
    ...envFor('checkout', stack.topology, {
      port: 0,
      httpPort: await freePort(),
      addrs: stack.addrs,
      publicBaseUrl: stack.url,
    }),
    STRIPE_SECRET_KEY: '',
    STRIPE_WEBHOOK_SECRET: '',
    STRIPE_API_URL: '',
    PAYMENT_PROVIDER: 'test',
    ...over,
  });

  it('in production, checkout refuses to start in test mode unless CHECKOUT_TEST_MODE=true', async () => {
    await expect(startCheckout({ env: await checkoutEnv({ NODE_ENV: 'production' }) })).rejects.toThrow(
      /CHECKOUT_TEST_MODE=true/,
    );
    const chosen = await startCheckout({
      env: await checkoutEnv({ NODE_ENV: 'production', CHECKOUT_TEST_MODE: 'true' }),
    });
    await chosen.stop();
  });

  it('in production, checkout refuses a Stripe test key unless CHECKOUT_TEST_MODE=true', async () => {
    const stripeEnv = { PAYMENT_PROVIDER: 'stripe', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, NODE_ENV: 'production' };
    await expect(
      startCheckout({ env: await checkoutEnv({ ...stripeEnv, STRIPE_SECRET_KEY: 'sk_test_licensing' }) }),
    ).rejects.toThrow(/STRIPE_SECRET_KEY is a Stripe test key[\s\S]*CHECKOUT_TEST_MODE=true/);
  });

  it('with Stripe, it refuses to start with one key given and not the other; with neither it runs without payments', async () => {
    await expect(
      startCheckout({ env: await checkoutEnv({ PAYMENT_PROVIDER: 'stripe', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }) }),
    ).rejects.toThrow(/STRIPE_SECRET_KEY/);
    await expect(
      startCheckout({ env: await checkoutEnv({ PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_licensing' }) }),
    ).rejects.toThrow(/STRIPE_WEBHOOK_SECRET/);
    // Neither given (a fresh deployment): it starts (services/checkout/test/component/payments-not-configured.test.ts says what it answers).
    const unconfigured = await startCheckout({ env: await checkoutEnv({ PAYMENT_PROVIDER: 'stripe' }) });
    await unconfigured.stop();
  });
});
