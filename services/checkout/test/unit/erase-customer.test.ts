import { eraseCustomer as eraseSessions } from '../../src/use-cases/erase-customer';
import type { SessionDoc } from '../../src/store/models';
import { FakeCheckoutStore, FakeSubscriptionEmails } from '../../../../test/support/fakes/checkout-store';

const req = { account_id: 'acct_A', email: 'Ann@Example.com', placeholder: 'erased-1@erased.invalid' };

describe("erasing a customer from the account's checkout sessions and subscriptions", () => {
  const session = (id: string, over: Partial<SessionDoc>) => ({ _id: id, account_id: 'acct_A', ...over }) as SessionDoc;

  it('replaces the e-mail in any case, older sessions and subscriptions too, only in this account; a second call changes nothing', async () => {
    const store = new FakeCheckoutStore();
    store.sessions.set(
      'cs_1',
      session('cs_1', { customer_email: 'ann@example.com', customer_email_lc: 'ann@example.com' }),
    );
    store.sessions.set('cs_2', session('cs_2', { customer_email: 'ANN@example.com' })); // stored before customer_email_lc
    store.sessions.set('cs_3', session('cs_3', { customer_email: 'bob@example.com' }));
    store.sessions.set('cs_4', session('cs_4', { account_id: 'acct_B', customer_email: 'ann@example.com' }));
    const subscriptions = new FakeSubscriptionEmails();
    subscriptions.add('sub_1', 'acct_A', 'Ann@example.COM');
    subscriptions.add('sub_2', 'acct_A', 'bob@example.com');
    subscriptions.add('sub_3', 'acct_B', 'ann@example.com');
    const stores = { sessions: store, subscriptions };
    expect(await eraseSessions(stores, req)).toBe(3);
    expect([...subscriptions.rows.values()].map((s) => [s._id, s.customer_email, s.customer_email_lc])).toEqual([
      ['sub_1', 'erased-1@erased.invalid', 'erased-1@erased.invalid'],
      ['sub_2', 'bob@example.com', 'bob@example.com'],
      ['sub_3', 'ann@example.com', 'ann@example.com'],
    ]);
    expect([...store.sessions.values()].map((s) => [s._id, s.customer_email, s.customer_email_lc])).toEqual([
      ['cs_1', 'erased-1@erased.invalid', 'erased-1@erased.invalid'],
      ['cs_2', 'erased-1@erased.invalid', 'erased-1@erased.invalid'],
      ['cs_3', 'bob@example.com', 'bob@example.com'],
      ['cs_4', 'ann@example.com', undefined],
    ]);
    expect(await eraseSessions(stores, req)).toBe(0);
  });
});
