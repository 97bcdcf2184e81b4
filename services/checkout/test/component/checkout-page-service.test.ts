import {
  CheckoutPageServiceClient,
  CheckoutServiceClient,
  LicenseServiceService,
  ProductServiceService,
  License,
} from '@licensing/proto';
import { AppError, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer, stopAndDrop } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { testTopology } from '../../../../test/support/stack';

// The hosted checkout page's calls (CheckoutPageService), as the web component makes them, against
// real FerretDB and NATS, the product and licence services faked at the gRPC boundary: form tokens
// and receipts are the service's own secrets, the key goes only to the browser that paid, a session
// is paid once whatever the tabs do, and only the web component may call these methods.

const t = testTopology();
const account = newId('acct');
const productId = newId('prod');
const KEY = 'ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567';

let products: FakePeer<typeof ProductServiceService>;
let licenses: FakePeer<typeof LicenseServiceService>;
let service: Awaited<ReturnType<typeof start>>;
let checkout: ReturnType<typeof createClient<CheckoutServiceClient>>;
let pages: ReturnType<typeof createClient<CheckoutPageServiceClient>>;

const license = (): License =>
  License.fromPartial({ id: newId('lic'), account_id: account, product_id: productId, key: KEY, status: 'active' });

beforeAll(async () => {
  products = await startFakePeer(ProductServiceService, {
    getProduct: ({ id }) => ({
      id,
      account_id: account,
      name: 'Editor <Pro>',
      description: '',
      created_at: '2026-01-01T00:00:00.000Z',
      policy: undefined,
      price: { amount: 1500, currency: 'EUR' },
      email_on_purchase: true,
    }),
  });
  licenses = await startFakePeer(LicenseServiceService, { createLicense: () => license() });
  await setUpEvents(t);
  service = await start({
    env: envFor('checkout', t, {
      port: 0,
      httpPort: 0,
      addrs: { product: products.address, license: licenses.address },
    }),
  });
  const address = `127.0.0.1:${service.port}`;
  checkout = createClient(CheckoutServiceClient, address, credentialOf(t, 'gateway'));
  pages = createClient(CheckoutPageServiceClient, address, credentialOf(t, 'web'));
});

afterAll(async () => {
  checkout?.close();
  pages?.close();
  await stopAndDrop('the checkout service', service);
  await products?.stop();
  await licenses?.stop();
});

const newSession = (cancelUrl = 'https://vendor.example/cart') =>
  checkout.call.createSession({
    account_id: account,
    product_id: productId,
    customer_email: '',
    success_url: 'https://vendor.example/thanks?from=checkout',
    cancel_url: cancelUrl,
    metadata: {},
    expires_in_minutes: 0,
    idempotency_key: '',
  });

const openPage = (id: string, receipt = '') => pages.call.getPage({ session_id: id, receipt, issue_form_token: true });
const payWith = (id: string, form_token: string, over: { receipt?: string; email?: string; card?: string } = {}) =>
  pages.call.pay({
    session_id: id,
    form_token,
    receipt: over.receipt ?? '',
    email: over.email ?? 'buyer@example.com',
    card: over.card ?? '4242 4242 4242 4242',
  });

it('shows an open session as its buyer sees it, with a fresh form token each time', async () => {
  const s = await newSession();
  const first = await openPage(s.id);
  expect(first).toMatchObject({
    state: 'open',
    license_key: '',
    session: {
      id: s.id,
      product_name: 'Editor <Pro>',
      amount: 1500,
      currency: 'EUR',
      return_url: `https://vendor.example/thanks?from=checkout&session_id=${s.id}`,
      cancel_url: 'https://vendor.example/cart',
      provider: 'test',
      takes_cards: true,
      interval: '',
    },
  });
  expect(first.form_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect((await openPage(s.id)).form_token).not.toBe(first.form_token);
  expect(await pages.call.getPage({ session_id: s.id, receipt: '', issue_form_token: false })).toMatchObject({
    state: 'open',
    form_token: '',
  });
  for (const id of [newId('cs'), 'not-an-id'])
    expect(await openPage(id)).toMatchObject({ state: 'not_found', session: undefined, form_token: '' });
});

it('pays only with a token issued for this session; the receipt shows the key, and only to its browser', async () => {
  const s = await newSession();
  const other = await newSession();
  const { form_token } = await openPage(s.id);
  const { form_token: othersToken } = await openPage(other.id);
  expect((await payWith(s.id, othersToken)).outcome).toBe('form_expired');
  expect((await payWith(s.id, 'made-up')).outcome).toBe('form_expired');
  expect(await payWith(s.id, form_token, { email: 'not an address' })).toMatchObject({
    outcome: 'invalid_email',
    session: { id: s.id },
    form_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
  });
  expect(await payWith(s.id, form_token, { card: '4000 0000 0000 0002' })).toMatchObject({
    outcome: 'declined',
    message: expect.stringContaining('declined'),
    session: { customer_email: 'buyer@example.com' },
  });
  const paid = await payWith(s.id, form_token);
  expect(paid.outcome).toBe('paid');
  expect(paid.receipt).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(licenses.calls.filter((c) => c.method === 'createLicense').at(-1)).toMatchObject({
    caller: 'checkout',
    request: { idempotency_key: `checkout:${s.id}`, customer_email: 'buyer@example.com' },
  });
  expect(await openPage(s.id, paid.receipt)).toMatchObject({ state: 'paid_here', license_key: KEY });
  expect(await openPage(s.id)).toMatchObject({ state: 'complete', license_key: '', form_token: '' });
  expect(await openPage(s.id, 'someone-elses-receipt')).toMatchObject({ state: 'complete', license_key: '' });
  // A second click on the form that paid is the same buyer: another receipt, the same licence.
  const again = await payWith(s.id, form_token);
  expect(again.outcome).toBe('paid');
  expect(await openPage(s.id, again.receipt)).toMatchObject({ state: 'paid_here', license_key: KEY });
  // Another tab's form (a token issued before the payment) finds it paid.
  const tab = await newSession();
  const [a, b] = await Promise.all([openPage(tab.id), openPage(tab.id)]);
  expect((await payWith(tab.id, a.form_token)).outcome).toBe('paid');
  expect((await payWith(tab.id, b.form_token)).outcome).toBe('already_paid');
});

it('goes back to cancel_url only with the form token of the page, and not once paid', async () => {
  const s = await newSession();
  const { form_token } = await openPage(s.id);
  expect(await pages.call.cancel({ session_id: s.id, form_token: 'made-up' })).toEqual({
    outcome: 'form_expired',
    cancel_url: '',
  });
  expect(await pages.call.cancel({ session_id: s.id, form_token })).toEqual({
    outcome: 'cancelled',
    cancel_url: 'https://vendor.example/cart',
  });
  expect((await payWith(s.id, form_token)).outcome).toBe('paid');
  expect((await pages.call.cancel({ session_id: s.id, form_token })).outcome).toBe('already_paid');
  const expired = await newSession('');
  const token = (await openPage(expired.id)).form_token;
  await checkout.call.expireSession({ account_id: account, id: expired.id });
  expect((await pages.call.cancel({ session_id: expired.id, form_token: token })).outcome).toBe('expired');
  expect((await payWith(expired.id, token)).outcome).toBe('expired');
  expect((await openPage(expired.id)).state).toBe('expired');
});

it('a billing link that is not valid shows nothing', async () => {
  const s = await newSession();
  for (const token of ['short', 'A'.repeat(43)]) {
    expect(await pages.call.getBilling({ session_id: s.id, token })).toMatchObject({ found: false, status: '' });
    expect(await pages.call.updateBillingCard({ session_id: s.id, token, card: '4242' })).toMatchObject({
      found: false,
    });
  }
});

it('lets only the web component call the page methods', async () => {
  const asGateway = createClient(CheckoutPageServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
  const refused = await asGateway.call
    .getPage({ session_id: newId('cs'), receipt: '', issue_form_token: false })
    .catch((e: unknown) => e);
  asGateway.close();
  expect(refused).toBeInstanceOf(AppError);
  expect((refused as AppError).code).toBe('forbidden');
});
