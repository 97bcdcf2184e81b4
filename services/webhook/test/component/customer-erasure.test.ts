import type { CheckoutData, LicenseData } from '@licensing/proto';
import { connectMongo, newId } from '@licensing/runtime';
import type { Connection } from 'mongoose';
import { eventually } from '../../../../test/support/eventually';
import { eventOf, newAccount, type RunningWebhook, startWebhook } from './running-webhook';

// EraseCustomer on the webhook service alone (as the gateway's DELETE /api/v1/customers/{email} calls it:
// gateway/test/component/customer-erasure-routes.test.ts), against real FerretDB and NATS: the e-mail
// leaves every delivery recorded for the account's endpoints (the licences' events, a machine named after
// it, a checkout), other customers whose addresses hold it stay whole, a repeat changes nothing, and the
// customer.erased the licence service publishes reaches the vendor's endpoint.

jest.setTimeout(60_000);

let hooks: RunningWebhook;
let db: Connection;

beforeAll(async () => {
  hooks = await startWebhook();
  db = await connectMongo(hooks.t.mongoUrl, `${hooks.t.dbPrefix}_webhook`);
});

afterAll(async () => {
  await db?.close();
  await hooks?.stop();
});

const licence = (email: string): LicenseData => ({
  id: newId('lic'),
  key: `LIC-${newId('k').slice(-10).toUpperCase()}`,
  product_id: newId('prod'),
  customer_email: email,
  status: 'active',
  expires_at: null,
  created_at: new Date().toISOString(),
  entitlements: [],
});

describe('erasing a customer', () => {
  it('leaves no trace of the e-mail in deliveries; a repeat changes nothing; the endpoint hears customer.erased', async () => {
    const account = newAccount();
    await hooks.endpoint(account, '/erasure', ['*']);
    const erin = licence('Erin.Smith@Example.com');
    // Other customers whose addresses hold the erased one: theirs stay whole.
    const longer = ['xerin.smith@example.com', 'erin.smith@example.com.au'];
    for (const l of [erin, licence('keep@example.com'), ...longer.map(licence)])
      await hooks.publish(eventOf('license.created', account, { license: l }));
    await hooks.publish(
      eventOf('license.activated', account, {
        license: erin,
        activation: {
          id: newId('act'),
          license_id: erin.id,
          license_key: erin.key,
          fingerprint: 'erin-1',
          name: "erin.smith@example.com's MacBook",
          created_at: new Date().toISOString(),
          lease_expires_at: null,
        },
      }),
    );
    const checkout: CheckoutData = {
      id: newId('cs'),
      product_id: erin.product_id,
      status: 'open',
      amount: 4900,
      currency: 'EUR',
      customer_email: 'ERIN.SMITH@example.com',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      created_at: new Date().toISOString(),
      livemode: false,
    };
    await hooks.publish(eventOf('checkout.created', account, { checkout }));
    // license.created ×4, license.activated, checkout.created, each recorded as a delivery.
    await hooks.receiver.waitFor('/erasure', 6);
    const everything = async () =>
      JSON.stringify(await db.collection('webhook_deliveries').find({ account_id: account }).toArray());
    // The address itself, not inside the longer ones.
    const erinAsAWhole = /(?<![\w.+-])erin\.smith@example\.com(?![\w-]|\.\w)/i;
    await eventually(async () => expect(await everything()).toMatch(erinAsAWhole));

    const req = { account_id: account, email: 'erin.smith@EXAMPLE.com', placeholder: 'erased-7f3a@erased.invalid' };
    expect((await hooks.api.eraseCustomer(req)).erased).toBeGreaterThanOrEqual(3);
    expect(await everything()).not.toMatch(erinAsAWhole);
    expect(await everything()).toContain('erased-7f3a@erased.invalid');
    expect(await everything()).toContain("erased-7f3a@erased.invalid's MacBook");
    expect(await everything()).toContain('keep@example.com');
    const stored = await db.collection('webhook_deliveries').find({ account_id: account }).toArray();
    const customers = stored.map(
      (d) => (JSON.parse(d.body) as { data: { license?: { customer_email: string } } }).data.license?.customer_email,
    );
    expect(customers).toEqual(expect.arrayContaining(longer));

    // The licence service's customer.erased: the vendor's endpoint hears of it.
    await hooks.publish(
      eventOf('customer.erased', account, { placeholder: 'erased-7f3a@erased.invalid', licenses: 1 }),
    );
    const delivered = await hooks.receiver.waitFor('/erasure', 7);
    expect(delivered.some((r) => JSON.parse(r.body).type === 'customer.erased')).toBe(true);

    // Every delivery's result recorded, so the snapshot below moves only if the repeat changes something.
    await eventually(async () => {
      const statuses = (await db.collection('webhook_deliveries').find({ account_id: account }).toArray()).map(
        (d) => d.status,
      );
      expect(statuses).toEqual(Array(7).fill('delivered'));
    });
    const snapshot = await everything();
    expect(await hooks.api.eraseCustomer(req)).toEqual({ erased: 0 });
    // Nothing changed.
    expect(await everything()).toEqual(snapshot);
  });
});
