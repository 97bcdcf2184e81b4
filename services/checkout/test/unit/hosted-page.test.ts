import { AppError, createLogger } from '@licensing/runtime';
import { PaymentsNotConfigured, TestModeProvider, type PaymentProvider } from '../../src/domain/payments';
import type { SessionDoc } from '../../src/store/models';
import { Completion } from '../../src/use-cases/completion';
import { cancelOnPage, openPage, payOnPage, returnUrlOf } from '../../src/use-cases/hosted-page';
import { checkoutSetup, sessionDoc } from '../../../../test/support/fakes/checkout-deps';
import { FakeLicenses } from '../../../../test/support/fakes/checkout-peers';

/** The fake clock's start (test/support/fakes/common.ts). */
const START = Date.parse('2026-03-01T12:00:00.000Z');

async function setup(over: Partial<SessionDoc> = {}, provider: PaymentProvider = new TestModeProvider()) {
  const s = checkoutSetup();
  const completion = new Completion(s.store, new FakeLicenses(), s.outbox, s.clock, createLogger('test', 'silent'));
  const session = sessionDoc(s.clock.now(), over);
  await s.store.insert(session, []);
  const deps = { store: s.store, completion, provider, clock: s.clock };
  return { ...s, deps, session };
}

const form = (formToken: string, over: Partial<{ receipt: string; email: string; card: string }> = {}) => ({
  formToken,
  receipt: '',
  email: 'buyer@example.com',
  card: '4242424242424242',
  ...over,
});

describe('the hosted page (CheckoutPageService)', () => {
  it('a form token lasts an hour, never past its session, and only for its session', async () => {
    const long = await setup();
    const longer = await setup({ expires_at: new Date(START + 86_400_000) });
    const { formToken } = await openPage(longer.deps, longer.session._id, '', true);
    expect((await payOnPage(long.deps, long.session._id, form(formToken))).outcome).toBe('form_expired');
    longer.clock.advance(3_599_000);
    expect((await cancelOnPage(longer.deps, longer.session._id, formToken)).outcome).toBe('cancelled');
    longer.clock.advance(1_000);
    expect((await cancelOnPage(longer.deps, longer.session._id, formToken)).outcome).toBe('form_expired');
    const short = await setup({ expires_at: new Date(START + 600_000) });
    const early = (await openPage(short.deps, short.session._id, '', true)).formToken;
    short.clock.advance(600_000);
    expect((await cancelOnPage(short.deps, short.session._id, early)).outcome).toBe('form_expired');
  });

  it('stores only digests: the token and the receipt it hands out are not what the store holds', async () => {
    const { deps, store, session } = await setup();
    const { formToken } = await openPage(deps, session._id, '', true);
    const paid = await payOnPage(deps, session._id, form(formToken));
    expect(paid.outcome).toBe('paid');
    const receipt = (paid as { receipt: string }).receipt;
    expect(await store.hasReceipt(receipt, session._id)).toBe(false);
    expect(await store.pageTokenValid(formToken, session._id, deps.clock.now())).toBe(false);
    expect((await store.findById(session._id))!.paid_with).not.toBe(formToken);
    expect(await openPage(deps, session._id, receipt, true)).toMatchObject({
      state: 'paid_here',
      licenseKey: 'KEY-1',
      formToken: '',
    });
  });

  it('gives no form token to a session not paid with a card here, and refuses paying it', async () => {
    const stripe = await setup({ provider: 'stripe', provider_url: 'https://checkout.stripe.com/c/x' });
    expect(await openPage(stripe.deps, stripe.session._id, '', true)).toMatchObject({ state: 'open', formToken: '' });
    const off = new PaymentsNotConfigured(() => new AppError('service_unavailable', 'not configured'));
    const closed = await setup({}, off);
    expect((await openPage(closed.deps, closed.session._id, '', true)).formToken).toBe('');
    // A token issued before payments were switched off: the form is answered, nothing is charged.
    const open = await setup();
    const { formToken } = await openPage(open.deps, open.session._id, '', true);
    const later = { ...open.deps, provider: off };
    expect((await payOnPage(later, open.session._id, form(formToken))).outcome).toBe('not_payable_here');
    expect((await open.store.findById(open.session._id))!.status).toBe('open');
  });

  it('sends the buyer back to success_url with the session id', async () => {
    const { session } = await setup({ success_url: 'https://v.example/t?a=1' });
    expect(returnUrlOf(session)).toBe(`https://v.example/t?a=1&session_id=${session._id}`);
  });
});
