import { eraseCustomer as eraseDeliveries } from '../../src/use-cases/erase-customer';
import type { DeliveryDoc } from '../../src/store/deliveries';
import { FakeDeliveryStore } from '../../../../test/support/fakes/webhook-stores';

const req = { account_id: 'acct_A', email: 'Ann@Example.com', placeholder: 'erased-1@erased.invalid' };

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
