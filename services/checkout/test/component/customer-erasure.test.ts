import {
  CheckoutPageServiceClient,
  CheckoutServiceClient,
  License,
  LicenseServiceService,
  Product,
  ProductServiceService,
  SubscriptionServiceClient,
  generateLicenseKey,
} from '@licensing/proto';
import { AppError, connectMongo, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import type { Connection } from 'mongoose';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { eventually } from '../../../../test/support/eventually';
import { testTopology } from '../../../../test/support/stack';

// EraseCustomer on the checkout service alone (as the gateway's DELETE /api/v1/customers/{email} calls it:
// gateway/test/component/customer-erasure-routes.test.ts), against real FerretDB and NATS, its product and
// licence services faked at the gRPC boundary: the e-mail leaves the account's checkout sessions and
// subscriptions (one bought on the hosted test-mode page), the placeholder takes its place, and a repeat
// changes nothing. Real time: the outbox clears published events from their documents after a few seconds.

jest.setTimeout(60_000);

const t = testTopology();
const account = newId('acct');
const products = [
  Product.fromPartial({
    id: newId('prod'),
    account_id: account,
    name: 'Editor',
    price: { amount: 4900, currency: 'EUR' },
  }),
  Product.fromPartial({
    id: newId('prod'),
    account_id: account,
    name: 'Editor Monthly',
    price: { amount: 900, currency: 'EUR', interval: 'month' },
  }),
];
const licences: License[] = [];

let productPeer: FakePeer<typeof ProductServiceService>;
let licencePeer: FakePeer<typeof LicenseServiceService>;
let service: Awaited<ReturnType<typeof start>>;
let checkout: ReturnType<typeof createClient<CheckoutServiceClient>>;
let subscriptions: ReturnType<typeof createClient<SubscriptionServiceClient>>;
let pages: ReturnType<typeof createClient<CheckoutPageServiceClient>>;
let db: Connection;

beforeAll(async () => {
  productPeer = await startFakePeer(ProductServiceService, {
    getProduct: ({ account_id, id }) => {
      const found = products.find((p) => p.id === id && p.account_id === account_id);
      if (!found) throw new AppError('not_found', `product ${id} not found`);
      return found;
    },
  });
  // The licence service: a licence issued for each paid session, following its subscription.
  licencePeer = await startFakePeer(LicenseServiceService, {
    createLicense: (req) => {
      const licence = License.fromPartial({
        id: newId('lic'),
        account_id: req.account_id,
        product_id: req.product_id,
        key: generateLicenseKey(),
        customer_email: req.customer_email,
        status: 'active',
        created_at: new Date().toISOString(),
      });
      licences.push(licence);
      return licence;
    },
    applySubscription: ({ account_id, key, subscription, expires_at }) => {
      const found = licences.find((l) => l.account_id === account_id && l.key === key);
      if (!found) throw new AppError('not_found', 'licence not found');
      Object.assign(found, { subscription, expires_at });
      return found;
    },
  });
  await setUpEvents(t);
  service = await start({
    env: envFor('checkout', t, {
      port: 0,
      httpPort: 0,
      addrs: { product: productPeer.address, license: licencePeer.address },
    }),
  });
  const address = `127.0.0.1:${service.port}`;
  checkout = createClient(CheckoutServiceClient, address, credentialOf(t, 'gateway'));
  subscriptions = createClient(SubscriptionServiceClient, address, credentialOf(t, 'gateway'));
  pages = createClient(CheckoutPageServiceClient, address, credentialOf(t, 'web'));
  db = await connectMongo(t.mongoUrl, `${t.dbPrefix}_checkout`);
});

afterAll(async () => {
  for (const c of [checkout, subscriptions, pages]) c?.close();
  await db?.close();
  await service?.ctx.db.dropDatabase();
  await service?.stop();
  await productPeer?.stop();
  await licencePeer?.stop();
});

const newSession = (productId: string, customerEmail = '') =>
  checkout.call.createSession({
    account_id: account,
    product_id: productId,
    customer_email: customerEmail,
    success_url: 'https://vendor.example/thanks',
    cancel_url: '',
    metadata: {},
    expires_in_minutes: 0,
    idempotency_key: '',
  });
const OUTBOX_WAIT = { timeoutMs: 30_000, intervalMs: 100 };

describe('erasing a customer', () => {
  it('leaves no trace of the e-mail in checkout sessions; a repeat changes nothing', async () => {
    const session = await newSession(products[0].id, 'ERIN.SMITH@example.com');
    const stored = async () =>
      JSON.stringify(
        await db
          .collection('checkout_sessions')
          .find({ _id: session.id as never })
          .toArray(),
      );
    expect(await stored()).toMatch(/erin\.smith@example\.com/i);
    const req = { account_id: account, email: 'erin.smith@EXAMPLE.com', placeholder: 'erased-7f3a@erased.invalid' };
    expect(await checkout.call.eraseCustomer(req)).toEqual({ erased: 1 });
    // The outbox keeps a published event on its document a few seconds before clearing it.
    await eventually(async () => expect(await stored()).not.toMatch(/erin\.smith@example\.com/i), OUTBOX_WAIT);
    expect(await stored()).toContain('erased-7f3a@erased.invalid');
    const snapshot = await stored();
    expect(await checkout.call.eraseCustomer(req)).toEqual({ erased: 0 });
    expect(await stored()).toEqual(snapshot);
  });

  it('takes the e-mail off subscriptions', async () => {
    const customer = 'Late.Buyer@Example.com';
    // A subscription bought on the hosted test-mode page, as the web component pays it.
    const session = await newSession(products[1].id);
    const { form_token } = await pages.call.getPage({ session_id: session.id, receipt: '', issue_form_token: true });
    const paid = await pages.call.pay({
      session_id: session.id,
      form_token,
      receipt: '',
      email: customer,
      card: '4242 4242 4242 4242',
    });
    expect(paid.outcome).toBe('paid');
    const bySubscriber = async () =>
      (
        await subscriptions.call.listSubscriptions({
          account_id: account,
          page: { limit: 100, starting_after: '' },
          status: '',
          customer_email: customer.toLowerCase(),
          product_id: '',
        })
      ).data;
    await eventually(async () => expect(await bySubscriber()).toHaveLength(1), { timeoutMs: 15_000 });
    const stored = async () =>
      JSON.stringify([
        await db.collection('checkout_sessions').find({ account_id: account }).toArray(),
        await db.collection('subscriptions').find({ account_id: account }).toArray(),
      ]);
    expect(await stored()).toMatch(/late\.buyer@example\.com/i);

    const req = { account_id: account, email: customer, placeholder: 'erased-5e1f@erased.invalid' };
    // The session and the subscription.
    expect(await checkout.call.eraseCustomer(req)).toEqual({ erased: 2 });
    expect(await bySubscriber()).toEqual([]);
    const [subscription] = (
      await subscriptions.call.listSubscriptions({
        account_id: account,
        page: { limit: 100, starting_after: '' },
        status: '',
        customer_email: '',
        product_id: '',
      })
    ).data;
    expect(subscription.customer_email).toBe('erased-5e1f@erased.invalid');
    // The outbox keeps a published event on its document a few seconds before clearing it.
    await eventually(async () => expect(await stored()).not.toMatch(/late\.buyer@example\.com/i), OUTBOX_WAIT);
    expect(await checkout.call.eraseCustomer(req)).toEqual({ erased: 0 });
  });
});
