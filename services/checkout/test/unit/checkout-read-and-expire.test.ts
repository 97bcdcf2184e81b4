import { checkoutHandlers } from '../../src/handlers/checkout-handlers';
import { expireSession } from '../../src/use-cases/expire-session';
import { getSession, listSessions } from '../../src/use-cases/read-sessions';
import { refusal } from '../../../../test/support/fakes/common';
import { checkoutSetup, sessionDoc } from '../../../../test/support/fakes/checkout-deps';
import { FakeProvider } from '../../../../test/support/fakes/checkout-peers';
import { FakeSubscriptionEmails } from '../../../../test/support/fakes/checkout-store';

const ctx = { requestId: '', caller: 'gateway' as const, log: undefined as never };

async function setup(provider?: FakeProvider) {
  const s = checkoutSetup(provider);
  const open = sessionDoc(s.clock.now());
  await s.store.insert(open, []);
  return { ...s, open };
}

describe('reading checkout sessions', () => {
  it('a session past its expiry reads as expired before the sweeper records it', async () => {
    const { store, clock, deps, open } = await setup();
    expect((await getSession(deps, 'acct_A', open._id)).status).toBe('open');
    clock.advance(3600_000);
    expect((await getSession(deps, 'acct_A', open._id)).status).toBe('expired');
    expect(store.sessions.get(open._id)!.status).toBe('open');
  });

  it.each([
    ['a malformed id', 'acct_A', 'cs_nope'],
    ["another account's session", 'acct_B', ''],
  ])('answers not found for %s', async (_what, accountId, id) => {
    const { deps, open } = await setup();
    expect(await refusal(() => getSession(deps, accountId, id || open._id))).toMatchObject({
      code: 'not_found',
      message: 'checkout session not found',
    });
  });

  it("lists by status as seen now, and only the account's own", async () => {
    const { store, clock, deps, open } = await setup();
    const done = sessionDoc(clock.now(), { status: 'complete' });
    const lapsing = sessionDoc(clock.now(), { expires_at: new Date(clock.now().getTime() + 60_000) });
    await store.insert(done, []);
    await store.insert(lapsing, []);
    await store.insert(sessionDoc(clock.now(), { account_id: 'acct_B' }), []);
    clock.advance(120_000);
    const ids = async (status: string) =>
      (await listSessions(deps, 'acct_A', status, undefined)).items.map((s) => [s._id, s.status]);
    expect(await ids('open')).toEqual([[open._id, 'open']]);
    expect(await ids('expired')).toEqual([[lapsing._id, 'expired']]);
    expect(await ids('complete')).toEqual([[done._id, 'complete']]);
    expect(await ids('')).toHaveLength(3);
  });

  it('refuses an unknown status filter', async () => {
    const { deps } = await setup();
    expect(await refusal(() => listSessions(deps, 'acct_A', 'paid', undefined))).toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'status' }],
    });
  });

  it("the handler answers the effective status and the provider's page when there is one", async () => {
    const { store, clock, deps, open } = await setup();
    const onStripe = sessionDoc(clock.now(), { provider: 'stripe', provider_url: 'https://pay.example/x' });
    await store.insert(onStripe, []);
    clock.advance(3600_000);
    const h = checkoutHandlers(deps, false, new FakeSubscriptionEmails());
    expect(await h.getSession({ account_id: 'acct_A', id: open._id }, ctx)).toMatchObject({
      status: 'expired',
      url: `https://shop.example/checkout/${open._id}`,
    });
    expect((await h.getSession({ account_id: 'acct_A', id: onStripe._id }, ctx)).url).toBe('https://pay.example/x');
  });
});

describe('expiring a checkout session', () => {
  it('expires an open session once, with checkout.expired named after the session, handed to the outbox', async () => {
    const { store, outbox, deps, open } = await setup();
    const out = await expireSession(deps, 'acct_A', open._id);
    expect(out.status).toBe('expired');
    expect(store.sessions.get(open._id)!.status).toBe('expired');
    expect(store.events).toEqual([
      expect.objectContaining({ id: `evt_expired_${open._id}`, type: 'checkout.expired', account_id: 'acct_A' }),
    ]);
    expect(outbox.flushed).toEqual([{ model: 'CheckoutSession', id: open._id }]);
    await expireSession(deps, 'acct_A', open._id);
    expect(store.events).toHaveLength(1);
    expect(outbox.flushed).toHaveLength(1);
  });

  it('refuses to expire a complete session', async () => {
    const { store, outbox, clock, deps } = await setup();
    const paid = sessionDoc(clock.now(), { status: 'complete' });
    await store.insert(paid, []);
    expect(await refusal(() => expireSession(deps, 'acct_A', paid._id))).toMatchObject({
      code: 'conflict',
      message: 'the checkout session is complete: it cannot be expired',
    });
    expect(outbox.flushed).toEqual([]);
  });

  it('expires the Stripe session first, and refuses when the buyer just paid there', async () => {
    const provider = new FakeProvider('stripe');
    const { store, clock, deps } = await setup(provider);
    const onStripe = sessionDoc(clock.now(), { provider: 'stripe', provider_session_id: 'cs_test_1' });
    await store.insert(onStripe, []);
    provider.cancelAnswer = false;
    expect(await refusal(() => expireSession(deps, 'acct_A', onStripe._id))).toMatchObject({
      code: 'conflict',
      message: 'the checkout session was just paid on Stripe: it cannot be expired',
    });
    expect(store.sessions.get(onStripe._id)!.status).toBe('open');
    provider.cancelAnswer = true;
    expect((await expireSession(deps, 'acct_A', onStripe._id)).status).toBe('expired');
    expect(provider.cancelled).toEqual(['cs_test_1', 'cs_test_1']);
  });

  it('does not ask the provider about a test-mode session', async () => {
    const { provider, deps, open } = await setup();
    await expireSession(deps, 'acct_A', open._id);
    expect(provider.cancelled).toEqual([]);
  });

  it("answers not found for another account's session, expiring nothing", async () => {
    const { store, deps, open } = await setup();
    expect((await refusal(() => expireSession(deps, 'acct_B', open._id))).code).toBe('not_found');
    expect(store.sessions.get(open._id)!.status).toBe('open');
  });

  it('the handler answers the expired session', async () => {
    const { deps, open } = await setup();
    const out = await checkoutHandlers(deps, false, new FakeSubscriptionEmails()).expireSession(
      { account_id: 'acct_A', id: open._id },
      ctx,
    );
    expect(out).toMatchObject({ id: open._id, status: 'expired' });
  });
});
