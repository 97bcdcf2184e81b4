// @licensing/client's subscriptions: list/get/cancel/billingPortal against a running system
// in test mode, and verifyLicenseFile's paid_through and grace_until for a subscription licence.
import { type LicensingError, verifyLicenseFile, type LicensingClient } from '@licensing/client';
import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';
import { sdk } from '../support/sdk';
import { WebClient } from '../support/web-client';

let stack: OpenSharedStack;
let client: LicensingClient;
let productId: string;

beforeAll(async () => {
  stack = await openSharedStack();
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  client = sdk(stack.url, acct.apiKey);
  productId = (
    await client.products.create({
      name: 'SDK Monthly',
      price: { amount: 700, currency: 'EUR', interval: 'month' },
      policy: { grace_days: 2, duration_days: 30, payment_grace_days: 5 },
    })
  ).id;
});

afterAll(async () => {
  await stack?.close();
});

async function subscribe(): Promise<{ subscription: string; key: string }> {
  const session = await client.checkout.create({ product_id: productId, success_url: 'https://vendor.example/ok' });
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(`/checkout/${session.id}`);
  await web.post(`/checkout/${session.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email: 'sdk-subscriber@example.com',
    card: '4242 4242 4242 4242',
  });
  const paid = await client.checkout.get(session.id);
  return { subscription: paid.subscription_id!, key: paid.license_key! };
}

it('lists, gets, opens the billing portal for and cancels a subscription', async () => {
  const { subscription, key } = await subscribe();
  const page = await client.subscriptions.list({ status: 'active', product_id: productId }).page();
  expect(page.data.map((s) => s.id)).toContain(subscription);
  const one = await client.subscriptions.get(subscription);
  expect(one).toMatchObject({ id: subscription, status: 'active', license_key: key, quantity: 1 });
  expect(one.invoices).toHaveLength(1);
  const portal = await client.subscriptions.billingPortal(subscription);
  expect(portal.url).toContain('/billing/');
  const canceled = await client.subscriptions.cancel(subscription);
  expect(canceled.cancel_at_period_end).toBe(true);
  const now = await client.subscriptions.cancel(subscription, { atPeriodEnd: false });
  expect(now.status).toBe('canceled');
  const again = await client.subscriptions.cancel(subscription).then(
    () => null,
    (e: unknown) => e as LicensingError,
  );
  expect(again).toMatchObject({ status: 409, code: 'conflict' });
});

it('a subscription licence file carries paid_through and grace_until, which verifyLicenseFile returns', async () => {
  const { subscription, key } = await subscribe();
  const s = await client.subscriptions.get(subscription);
  const file = await client.licenses.file(key, { ttlDays: 60 });
  const verified = await verifyLicenseFile(file, { publicKeys: await client.products.signingKeys(productId) });
  expect(verified.valid).toBe(true);
  expect(verified.paid_through).toBe(s.current_period_end);
  expect(Date.parse(verified.grace_until!) - Date.parse(s.current_period_end)).toBe(2 * 86_400_000);
  expect(verified.license).toMatchObject({ paid_through: s.current_period_end, grace_until: verified.grace_until });
  // The file is worth nothing after the licence stops validating, whatever its ttl.
  expect(verified.license!.valid_until).toBe(verified.grace_until);
});
