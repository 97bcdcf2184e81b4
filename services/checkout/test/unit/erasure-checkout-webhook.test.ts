import { eraseCustomer as eraseSessions } from '../../src/use-cases/erase-customer';
import { eraseCustomer as eraseDeliveries } from '../../../webhook/src/use-cases/erase-customer';
import type { SessionDoc } from '../../src/store/models';
import type { DeliveryDoc } from '../../../webhook/src/store/deliveries';
import { FakeCheckoutStore, FakeSubscriptionEmails } from '../../../../test/support/fakes/checkout-store';
import { FakeDeliveryStore } from '../../../../test/support/fakes/webhook-stores';

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

describe("erasing a customer from the account's webhook deliveries", () => {
  const delivery = (id: string, account: string, data: unknown) =>
    ({ _id: id, account_id: account, body: JSON.stringify({ id: `evt_${id}`, data }) }) as DeliveryDoc;

  it('replaces the e-mail inside bodies in batches; other bodies and accounts are left alone; idempotent', async () => {
    const store = new FakeDeliveryStore();
    for (let i = 0; i < 1200; i++) {
      const id = `dlv_${String(i).padStart(5, '0')}`;
      store.docs.set(id, delivery(id, 'acct_A', { customer_email: i % 100 === 0 ? 'ann@EXAMPLE.com' : 'x@y.io' }));
    }
    store.docs.set('dlv_b', delivery('dlv_b', 'acct_B', { customer_email: 'ann@example.com' }));
    expect(await eraseDeliveries(store, req)).toBe(12);
    const bodies = [...store.docs.values()].filter((d) => d.account_id === 'acct_A').map((d) => d.body);
    expect(bodies.filter((b) => /ann@example\.com/i.test(b))).toEqual([]);
    expect(bodies.filter((b) => b.includes('erased-1@erased.invalid'))).toHaveLength(12);
    expect(store.docs.get('dlv_b')?.body).toMatch(/ann@example\.com/);
    expect(await eraseDeliveries(store, req)).toBe(0);
  });
});
