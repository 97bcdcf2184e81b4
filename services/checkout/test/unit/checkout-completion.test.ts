import { AppError, createLogger } from '@licensing/runtime';
import { Completion, PAID_GRACE_MS } from '../../src/use-cases/completion';
import { CheckoutExpirySweeper, PAGE_TOKEN_PRUNE_BATCH, PAGE_TOKEN_PRUNE_BATCHES } from '../../src/jobs/expiry-sweeper';
import { checkoutSetup, sessionDoc } from '../../../../test/support/fakes/checkout-deps';
import { FakeLicenses } from '../../../../test/support/fakes/checkout-peers';
import { FakeClock } from '../../../../test/support/fakes/common';
import type { SessionDoc } from '../../src/store/models';

async function setup(over: Partial<SessionDoc> = {}) {
  const s = checkoutSetup();
  const licenses = new FakeLicenses();
  const completion = new Completion(s.store, licenses, s.outbox, s.clock, createLogger('test', 'silent'));
  const session = sessionDoc(s.clock.now(), over);
  await s.store.insert(session, []);
  const stored = async () => (await s.store.findById(session._id))!;
  return { ...s, licenses, completion, session, stored };
}

const payment = { paymentId: 'pi_1', email: '', paidWith: 'tok' };

describe('completing a paid checkout', () => {
  it('records the payment on an open session once; a second tab is told it was not first', async () => {
    const { clock, completion, session, stored } = await setup();
    expect(await completion.markPaid(session, { ...payment, email: 'new@example.com' })).toBe(true);
    expect(await stored()).toMatchObject({
      status: 'complete',
      payment_id: 'pi_1',
      paid_at: clock.now(),
      paid_with: 'tok',
      customer_email: 'new@example.com',
    });
    expect(await completion.markPaid(session, { ...payment, paymentId: 'pi_2' })).toBe(false);
    expect((await stored()).payment_id).toBe('pi_1');
  });

  it('does not take a payment on a session past its expiry, unless the provider already took the money', async () => {
    const { clock, completion, session, stored } = await setup();
    clock.advance(3600_000);
    expect(await completion.markPaid(session, payment)).toBe(false);
    expect((await stored()).status).toBe('open');
    expect(await completion.markPaid(session, { ...payment, evenIfExpired: true })).toBe(true);
    expect((await stored()).status).toBe('complete');
  });

  it('issues the licence with the session as idempotency key and records it with checkout.completed', async () => {
    const { store, outbox, licenses, completion, session, stored } = await setup();
    await completion.markPaid(session, payment);
    const key = await completion.issue(await stored(), 'req_3');
    expect(key).toBe('KEY-1');
    expect(licenses.created).toEqual([
      {
        account_id: 'acct_A',
        product_id: session.product_id,
        customer_email: 'buyer@example.com',
        idempotency_key: `checkout:${session._id}`,
        // Its mail is checkout.completed's, never asked on license.created.
        send_email: false,
      },
    ]);
    expect((await stored()).license_key).toBe('KEY-1');
    expect(store.events).toEqual([
      expect.objectContaining({
        id: `evt_completed_${session._id}`,
        type: 'checkout.completed',
        data: expect.objectContaining({ license_key: 'KEY-1' }),
      }),
    ]);
    expect(outbox.flushed).toEqual([{ model: 'CheckoutSession', id: session._id }]);
  });

  it('issuing again (another tab, the sweeper) gives the same licence and no second event', async () => {
    const { store, outbox, licenses, completion, session, stored } = await setup();
    await completion.markPaid(session, payment);
    const paid = await stored();
    await completion.issue(paid);
    expect(await completion.issue(paid)).toBe('KEY-1');
    expect(await completion.issue(await stored())).toBe('KEY-1');
    expect(licenses.created).toHaveLength(2); // the third read the key from the session: no call
    expect(store.events).toHaveLength(1);
    expect(outbox.flushed).toHaveLength(1);
  });

  it('waits for another tab that is issuing the same licence (conflict), then records it', async () => {
    const { licenses, completion, session, stored } = await setup();
    await completion.markPaid(session, payment);
    licenses.createFailures.push(new AppError('conflict', 'in progress'));
    expect(await completion.issue(await stored())).toBe('KEY-1');
    expect(licenses.created).toHaveLength(2);
  });

  it('passes on any other failure of the licence service, recording nothing', async () => {
    const { store, licenses, completion, session, stored } = await setup();
    await completion.markPaid(session, payment);
    licenses.createFailures.push(new AppError('service_unavailable', 'down'));
    await expect(completion.issue(await stored())).rejects.toMatchObject({ code: 'service_unavailable' });
    expect((await stored()).license_key).toBeNull();
    expect(store.events).toEqual([]);
  });

  it('a refund that came before the completion applies once the licence exists', async () => {
    const { store, licenses, completion, session, stored } = await setup({ refund_action: 'suspend' });
    await completion.markPaid(session, payment);
    await store.addPendingRefund('pi_1');
    await completion.issue(await stored());
    expect(licenses.transitions).toEqual([{ account_id: 'acct_A', key: 'KEY-1', action: 'suspend' }]);
    expect((await stored()).refunded_at).not.toBeNull();
  });
});

describe('refunding a checkout', () => {
  it('before the licence exists, keeps the refund for later and touches no licence', async () => {
    const { store, licenses, completion, session } = await setup({ payment_id: 'pi_9' });
    await completion.refund(session);
    expect(store.pendingRefunds.has('pi_9')).toBe(true);
    expect(licenses.transitions).toEqual([]);
  });

  it('revokes the licence (the default) and records when', async () => {
    const { clock, licenses, completion, session, stored } = await setup({ license_key: 'KEY-7', status: 'complete' });
    await completion.refund(session, 'req_5');
    expect(licenses.transitions).toEqual([{ account_id: 'acct_A', key: 'KEY-7', action: 'revoke' }]);
    expect((await stored()).refunded_at).toEqual(clock.now());
  });

  it('takes a licence already revoked (409) as done, and passes on other failures unrecorded', async () => {
    const { licenses, completion, session, stored } = await setup({ license_key: 'KEY-7', status: 'complete' });
    licenses.transitionFailure = new AppError('service_unavailable', 'down');
    await expect(completion.refund(session)).rejects.toMatchObject({ code: 'service_unavailable' });
    expect((await stored()).refunded_at).toBeNull();
    licenses.transitionFailure = new AppError('conflict', 'already revoked');
    await completion.refund(session);
    expect((await stored()).refunded_at).not.toBeNull();
  });
});

describe('the sweeper', () => {
  it('finishes paid sessions left without a licence, and goes on past one that fails', async () => {
    const { store, clock, licenses, completion, stored } = await setup({ status: 'complete', payment_id: 'pi_1' });
    const other = sessionDoc(clock.now(), { status: 'complete', payment_id: 'pi_2' });
    await store.insert(other, []);
    licenses.createFailures.push(new AppError('service_unavailable', 'down'));
    expect(await completion.finishPaid()).toBe(1);
    expect(await completion.finishPaid()).toBe(1);
    expect([(await stored()).license_key, (await store.findById(other._id))!.license_key].sort()).toEqual([
      'KEY-1',
      'KEY-2',
    ]);
    expect(await completion.finishPaid()).toBe(0);
  });

  it('leaves a session paid a moment ago to the request finishing it, then finishes it', async () => {
    const paidAt = new FakeClock().now(); // the moment every fake clock starts at
    const { clock, completion, stored } = await setup({ status: 'complete', payment_id: 'pi_1', paid_at: paidAt });
    expect(await completion.finishPaid()).toBe(0);
    clock.advance(PAID_GRACE_MS + 1);
    expect(await completion.finishPaid()).toBe(1);
    expect((await stored()).license_key).toBe('KEY-1');
  });

  it('expires open sessions past their expiry once each, and forgets old signed deliveries', async () => {
    const { store, outbox, clock, completion, session } = await setup();
    const later = sessionDoc(clock.now(), { expires_at: new Date(clock.now().getTime() + 7200_000) });
    await store.insert(later, []);
    await store.claimDelivery('sig-old', clock.now());
    const sweeper = new CheckoutExpirySweeper(store, outbox, clock, completion);
    clock.advance(3600_000);
    expect(await sweeper.sweep()).toBe(1);
    expect(store.sessions.get(session._id)!.status).toBe('expired');
    expect(store.sessions.get(later._id)!.status).toBe('open');
    expect(outbox.flushed).toEqual([{ model: 'CheckoutSession', id: session._id }]);
    expect(store.deliveries.has('sig-old')).toBe(false);
    expect(await sweeper.sweep()).toBe(0);
  });

  it('forgets expired page form tokens, oldest first and a bounded number per sweep; live ones stay', async () => {
    const { store, outbox, clock, completion, session } = await setup();
    const at = (ms: number) => new Date(clock.now().getTime() + ms);
    const cap = PAGE_TOKEN_PRUNE_BATCH * PAGE_TOKEN_PRUNE_BATCHES;
    for (let i = 0; i < cap + 7; i++) await store.addPageToken(`old-${i}`, session._id, at(1000 + i));
    await store.addPageToken('live', session._id, at(3600_000));
    const sweeper = new CheckoutExpirySweeper(store, outbox, clock, completion);
    clock.advance(1000 + cap + 7);
    await sweeper.sweep();
    // One sweep's work is bounded: the newest seven expired tokens wait for the next one.
    expect([...store.pageTokens.keys()]).toEqual([...Array.from({ length: 7 }, (_, i) => `old-${cap + i}`), 'live']);
    await sweeper.sweep();
    expect([...store.pageTokens.keys()]).toEqual(['live']);
    expect(await store.pageTokenValid('live', session._id, clock.now())).toBe(true);
  });
});
