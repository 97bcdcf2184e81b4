import { AppError, newId } from '@licensing/runtime';
import { PAID_GRACE_MS } from '../../src/use-cases/completion';
import { eventually } from '../../../../test/support/eventually';
import { startCheckout, type RunningCheckout } from './running-checkout';

// A paid session whose licence could not be issued in time (the licence service slow behind a slow
// product service, a failover): the payment stands, the buyer's call fails as unavailable (the web
// component's page says 503 with Retry-After), and the sweeper finishes the session once it is
// PAID_GRACE_MS old, with the same idempotency key, so exactly one licence exists. The checkout
// service alone; the licence service faked, answering one key with one licence as the real one does
// (services/license/test/component/idempotent-issuance.test.ts).

let c: RunningCheckout;
const account = newId('acct');

beforeAll(async () => {
  c = await startCheckout();
});

afterAll(async () => {
  await c?.stop();
});

it('checkout: a paid session whose issuance ran out of time gets its licence once the product answers, exactly one', async () => {
  const productId = c.product(account, { amount: 900, currency: 'EUR' }).id;
  const session = await c.api.createSession(c.sessionRequest(account, productId));
  const { form_token } = await c.pages.getPage({ session_id: session.id, receipt: '', issue_form_token: true });
  // The licence service answers only once released: what the first call issues, it issues then.
  const issuing = c.licenses.calls.length;
  const release = c.holdLicences();
  let paid: unknown;
  try {
    paid = await c.pages
      .pay(
        { session_id: session.id, form_token, receipt: '', email: 'buyer@example.com', card: '4242 4242 4242 4242' },
        { timeoutMs: 1500 },
      )
      .catch((e: unknown) => e);
  } finally {
    release();
  }
  // Paid, but the licence could not be issued in time.
  expect(paid).toBeInstanceOf(AppError);
  expect((paid as AppError).code).toBe('service_unavailable');
  expect(c.licenses.calls.length).toBeGreaterThan(issuing);
  expect((await c.api.getSession({ account_id: account, id: session.id })).status).toBe('complete');
  // The sweeper finishes paid sessions left without a licence once they are PAID_GRACE_MS old.
  c.clock.advance(PAID_GRACE_MS + 1000);
  const key = await eventually(
    async () => {
      const s = await c.api.getSession({ account_id: account, id: session.id });
      expect(s.license_key).not.toBe('');
      return s.license_key;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  const asked = c.licenses.requestsTo('createLicense').filter((r) => r.product_id === productId);
  expect(asked.map((r) => r.idempotency_key)).toEqual(asked.map(() => `checkout:${session.id}`));
  expect(c.issued.filter((l) => l.product_id === productId)).toEqual([
    expect.objectContaining({ key, customer_email: 'buyer@example.com' }),
  ]);
});
