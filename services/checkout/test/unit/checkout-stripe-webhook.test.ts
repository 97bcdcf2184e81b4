import { createLogger } from '@licensing/runtime';
import type { StripeEventLike } from '../../src/domain/stripe-events';
import { Completion } from '../../src/use-cases/completion';
import { AppError } from '@licensing/runtime';
import { EVENT_LEASE_MS, StripeWebhook, type WebhookVerifier } from '../../src/use-cases/stripe-webhook';
import { eventually } from '../../../../test/support/eventually';
import { checkoutSetup, sessionDoc } from '../../../../test/support/fakes/checkout-deps';
import { FakeLicenses } from '../../../../test/support/fakes/checkout-peers';

/**
 * Stripe's signature stands in as "signed:<t>…": any such signature verifies the body, as signed at
 * time t (whatever follows it, as Stripe's header may carry more signatures); anything else does not.
 */
const verifier: WebhookVerifier = {
  verify: (body, signature) => {
    const t = /^signed:(\d+)/.exec(signature)?.[1];
    return t ? { event: JSON.parse(body.toString()) as StripeEventLike, signedAt: Number(t) } : null;
  },
};

async function setup() {
  const s = checkoutSetup();
  const licenses = new FakeLicenses();
  const log = createLogger('test', 'silent');
  const completion = new Completion(s.store, licenses, s.outbox, s.clock, log);
  // Waits for another delivery of the same event a second here (10 s in service).
  const webhook = new StripeWebhook(verifier, s.store, completion, s.outbox, s.clock, log, 1000);
  const session = sessionDoc(s.clock.now(), { provider: 'stripe', provider_session_id: 'cs_test_1' });
  await s.store.insert(session, []);
  let n = 0;
  const deliver = (event: StripeEventLike, signature = `signed:${++n}`) =>
    webhook.receive(Buffer.from(JSON.stringify(event)), signature, 'req_1');
  return { ...s, licenses, session, deliver, webhook };
}

const completed = (sessionId: string, over: Record<string, unknown> = {}, id = 'evt_1'): StripeEventLike => ({
  id,
  type: 'checkout.session.completed',
  livemode: false,
  data: {
    object: {
      id: 'cs_test_1',
      metadata: { checkout_session_id: sessionId },
      payment_status: 'paid',
      payment_intent: 'pi_1',
      amount_total: 4900,
      currency: 'eur',
      customer_details: { email: 'payer@example.com' },
      ...over,
    },
  },
});
const refunded = (paymentId: string, livemode = false): StripeEventLike => ({
  id: 'evt_r',
  type: 'charge.refunded',
  livemode,
  data: { object: { refunded: true, payment_intent: paymentId } },
});

describe('receiving a Stripe webhook', () => {
  it('refuses a body our secret did not sign (400), recording nothing', async () => {
    const { store, session, deliver } = await setup();
    const out = await deliver(completed(session._id), 'forged');
    expect(out).toMatchObject({ status: 400, error: { code: 'invalid_request' } });
    expect(store.deliveries.size).toBe(0);
  });

  it('a paid session completes, its licence is issued, and the event is recorded as handled', async () => {
    const { store, licenses, session, deliver } = await setup();
    expect(await deliver(completed(session._id))).toEqual({ status: 200, body: { received: true } });
    expect(store.sessions.get(session._id)).toMatchObject({
      status: 'complete',
      payment_id: 'pi_1',
      customer_email: 'payer@example.com',
      license_key: 'KEY-1',
    });
    expect(licenses.created).toHaveLength(1);
    expect(store.handledEvents.get('evt_1')).toEqual({ type: 'checkout.session.completed', session_id: session._id });
  });

  it('refuses the same signed request again as a replay (409)', async () => {
    const { session, deliver } = await setup();
    await deliver(completed(session._id), 'signed:700');
    expect(await deliver(completed(session._id), 'signed:700')).toMatchObject({
      status: 409,
      error: { code: 'conflict' },
    });
  });

  it('a replay is the event signed at the same time again, whatever its header or bytes (409)', async () => {
    const { licenses, session, deliver, webhook } = await setup();
    await deliver(completed(session._id), 'signed:700');
    expect(await deliver(completed(session._id), 'signed:700,v1=another')).toMatchObject({ status: 409 });
    const reserialized = Buffer.from(JSON.stringify(completed(session._id), null, 2));
    expect(await webhook.receive(reserialized, 'signed:700', 'req_1')).toMatchObject({ status: 409 });
    expect(licenses.created).toHaveLength(1);
  });

  it('the event id counts: a delivery of an event another delivery is handling waits for it and does nothing', async () => {
    const { store, licenses, session, deliver } = await setup();
    let answer!: () => void;
    licenses.createGate = new Promise<void>((r) => {
      answer = r;
    });
    const first = deliver(completed(session._id));
    await eventually(() => expect(licenses.created).toHaveLength(1));
    // Stripe's retry of the same event, signed anew, while the first is still at the licence service.
    const second = deliver(completed(session._id));
    await eventually(() => expect(licenses.created.length + store.busyAnswers).toBeGreaterThanOrEqual(2));
    answer();
    expect(await first).toEqual({ status: 200, body: { received: true } });
    expect(await second).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(licenses.created).toHaveLength(1);
  });

  it('an event whose handling failed half-way is handled by the next delivery', async () => {
    const { licenses, session, deliver } = await setup();
    licenses.createFailures.push(new AppError('service_unavailable', 'licence service down'));
    await expect(deliver(completed(session._id))).rejects.toThrow('licence service down');
    expect(await deliver(completed(session._id))).toEqual({ status: 200, body: { received: true } });
    expect(await deliver(completed(session._id))).toEqual({ status: 200, body: { received: true, duplicate: true } });
  });

  it('an event claimed by a delivery that died is taken over once the claim has run out', async () => {
    const { store, clock, licenses, session, deliver } = await setup();
    await store.claimEvent('evt_1', clock.now(), new Date(clock.now().getTime() + EVENT_LEASE_MS));
    expect(await deliver(completed(session._id))).toMatchObject({ status: 409, error: { code: 'conflict' } });
    expect(licenses.created).toEqual([]);
    clock.advance(EVENT_LEASE_MS + 1);
    expect(await deliver(completed(session._id))).toEqual({ status: 200, body: { received: true } });
    expect(licenses.created).toHaveLength(1);
  });

  it('answers an event handled before (a Stripe retry, signed anew) as a duplicate, doing nothing again', async () => {
    const { licenses, session, deliver } = await setup();
    await deliver(completed(session._id));
    expect(await deliver(completed(session._id))).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(licenses.created).toHaveLength(1);
  });

  it('answers 404 for a session it does not know, and leaves the event unhandled so Stripe retries', async () => {
    const { store, deliver } = await setup();
    expect(await deliver(completed('cs_01HZZZZZZZZZZZZZZZZZZZZZZZ'))).toMatchObject({
      status: 404,
      error: { code: 'not_found' },
    });
    expect(store.handledEvents.size).toBe(0);
  });

  it("refuses (400) a payment that is not the session's price, completing nothing", async () => {
    const { store, licenses, session, deliver } = await setup();
    const out = await deliver(completed(session._id, { amount_total: 100 }));
    expect(out).toMatchObject({
      status: 400,
      error: { message: 'the amount paid is not the price of the checkout session' },
    });
    expect(store.sessions.get(session._id)!.status).toBe('open');
    expect(licenses.created).toEqual([]);
  });

  it('waits for a delayed payment without completing the session', async () => {
    const { store, session, deliver } = await setup();
    expect(await deliver(completed(session._id, { payment_status: 'unpaid' }))).toEqual({
      status: 200,
      body: { received: true },
    });
    expect(store.sessions.get(session._id)!.status).toBe('open');
  });

  it('an expired Stripe session expires ours once, with checkout.expired', async () => {
    const { store, outbox, session, deliver } = await setup();
    await deliver({ ...completed(session._id), id: 'evt_x', type: 'checkout.session.expired' });
    expect(store.sessions.get(session._id)!.status).toBe('expired');
    expect(store.events.map((e) => e.type)).toEqual(['checkout.expired']);
    expect(outbox.flushed).toEqual([{ model: 'CheckoutSession', id: session._id }]);
  });

  it('ignores events it has no use for, and records them as handled', async () => {
    const { store, deliver } = await setup();
    expect(await deliver({ id: 'evt_i', type: 'customer.created', livemode: false, data: { object: {} } })).toEqual({
      status: 200,
      body: { received: true, ignored: 'events of type customer.created are not used' },
    });
    expect(store.handledEvents.has('evt_i')).toBe(true);
  });

  it('a full refund of a completed payment revokes its licence', async () => {
    const { store, licenses, session, deliver } = await setup();
    await deliver(completed(session._id));
    expect(await deliver(refunded('pi_1'))).toEqual({ status: 200, body: { received: true } });
    expect(licenses.transitions).toEqual([{ account_id: 'acct_A', key: 'KEY-1', action: 'revoke' }]);
    expect(store.sessions.get(session._id)!.refunded_at).not.toBeNull();
  });

  it('a refund of a payment not yet known is kept, and applied when the payment completes', async () => {
    const { store, licenses, session, deliver } = await setup();
    await deliver(refunded('pi_1'));
    expect(store.pendingRefunds.has('pi_1')).toBe(true);
    expect(licenses.transitions).toEqual([]);
    await deliver(completed(session._id));
    expect(licenses.transitions).toEqual([{ account_id: 'acct_A', key: 'KEY-1', action: 'revoke' }]);
  });

  it('a chargeback (charge.dispute.created) does what the refund policy says, before or after the completion', async () => {
    const { store, licenses, session, deliver } = await setup();
    const dispute = (id: string): StripeEventLike => ({
      id,
      type: 'charge.dispute.created',
      livemode: false,
      data: { object: { id: 'dp_1', object: 'dispute', charge: 'ch_1', payment_intent: 'pi_1' } },
    });
    await deliver(completed(session._id));
    expect(await deliver(dispute('evt_d1'))).toEqual({ status: 200, body: { received: true } });
    expect(licenses.transitions).toEqual([{ account_id: 'acct_A', key: 'KEY-1', action: 'revoke' }]);
    // A suspending product's session, disputed before Stripe's completion reached us.
    const later = sessionDoc(store.sessions.get(session._id)!.created_at, {
      provider: 'stripe',
      provider_session_id: 'cs_test_2',
      refund_action: 'suspend',
    });
    await store.insert(later, []);
    expect(await deliver({ ...dispute('evt_d2'), data: { object: { payment_intent: 'pi_2' } } })).toEqual({
      status: 200,
      body: { received: true },
    });
    expect(licenses.transitions).toHaveLength(1);
    await deliver(completed(later._id, { id: 'cs_test_2', payment_intent: 'pi_2' }, 'evt_2'));
    expect(licenses.transitions[1]).toEqual({ account_id: 'acct_A', key: 'KEY-2', action: 'suspend' });
  });

  it("refuses a refund whose livemode differs from the payment's", async () => {
    const { licenses, session, deliver } = await setup();
    await deliver(completed(session._id));
    expect(await deliver(refunded('pi_1', true))).toMatchObject({
      status: 400,
      error: { message: 'the refund and the payment differ in livemode' },
    });
    expect(licenses.transitions).toEqual([]);
  });
});
