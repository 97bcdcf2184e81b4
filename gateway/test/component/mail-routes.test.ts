import { generateLicenseKey, type Email, type License } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { fakeProduct, fakeVendor, licenseHandlers } from './fake-service-answers';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';
import { mailAnswers } from './mail-answers';

// The REST face of customer mail: send_email on POST /licenses and on a reroll is passed to the licence
// service (which asks the mail on the licence's event: services/license/test/component/licence-mail-events.test.ts),
// a send_email that is not a boolean is refused before any service is called, POST /licenses/{key}/email
// answers 202 with the mail the notification service queued, and GET /emails pages its log. The licence and
// notification services are faked; how they mail: services/notification/test/component/.

let gw: GatewayOverFakes;
const licences: License[] = [];
const mails: Email[] = [];
let product: string;

beforeAll(async () => {
  product = fakeProduct(fakeVendor(), 'Mailed').id;
  const licence = licenseHandlers(licences);
  gw = await startGatewayOverFakes({
    license: {
      ...licence,
      // A reroll as the licence service makes it: the licence takes a new key.
      rerollLicense: ({ account_id, key }) => {
        const found = licences.find((l) => l.account_id === account_id && l.key === key);
        if (!found) throw new AppError('not_found', 'licence not found');
        found.key = generateLicenseKey();
        return found;
      },
    },
    notification: mailAnswers(licences, mails),
  });
});

afterAll(async () => {
  await gw?.stop();
});

const create = (body: Record<string, unknown>) =>
  gw.request('POST', '/api/v1/licenses', { product_id: product, customer_email: 'api@example.com', ...body });

it('send_email on POST /licenses and POST /licenses/{key}/email (202) send the purchase e-mail', async () => {
  const created = await create({ send_email: true });
  expect(created.status).toBe(201);
  const key = created.body.license_key as string;
  expect(gw.peers.license.requestsTo('createLicense').at(-1)).toMatchObject({ send_email: true });
  expect((await create({ customer_email: 'silent@example.com' })).status).toBe(201);
  expect(gw.peers.license.requestsTo('createLicense').at(-1)).toMatchObject({ send_email: false });
  const again = await gw.request('POST', `/api/v1/licenses/${key}/email`);
  expect(again.status).toBe(202);
  expect(again.body).toMatchObject({ to: 'api@example.com', status: 'queued', license_key: key });
  expect(gw.peers.notification.requestsTo('sendLicenseEmail').at(-1)).toMatchObject({ account_id: gw.account, key });
  expect((await gw.request('POST', '/api/v1/licenses/AAAAA-BBBBB/email')).status).toBe(404);
  const bad = await create({ customer_email: 'x@example.com', send_email: 'yes' });
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe('invalid_request');
});

it('a reroll with send_email answers 200 with the new key, and asks the licence service for the mail', async () => {
  const key = (await create({ customer_email: 'down-reroll@example.com' })).body.license_key as string;
  const rerolled = await gw.request('POST', `/api/v1/licenses/${key}/reroll`, { send_email: true });
  expect(rerolled.status).toBe(200);
  expect(rerolled.body.key).not.toBe(key);
  expect(gw.peers.license.requestsTo('rerollLicense').at(-1)).toMatchObject({ key, send_email: true });
});

it("a reroll's send_email that is not a boolean is refused with 400 naming it, and the key stays", async () => {
  const key = (await create({ customer_email: 'bad@example.com' })).body.license_key as string;
  const asked = gw.peers.license.requestsTo('rerollLicense').length;
  const refused = await gw.request('POST', `/api/v1/licenses/${key}/reroll`, { send_email: 'yes' });
  expect(refused.status).toBe(400);
  expect(refused.body.code).toBe('invalid_request');
  expect(JSON.stringify(refused.body)).toContain('send_email');
  // The licence service was never asked: the key stays.
  expect(gw.peers.license.requestsTo('rerollLicense')).toHaveLength(asked);
  expect(licences.find((l) => l.customer_email === 'bad@example.com')!.key).toBe(key);
});

it('GET /emails pages the log with a cursor, and refuses a cursor that is not one', async () => {
  expect((await gw.request('GET', '/api/v1/emails?starting_after=nope')).status).toBe(400);
  const key = (await create({ customer_email: 'log@example.com' })).body.license_key as string;
  expect((await gw.request('POST', `/api/v1/licenses/${key}/email`)).status).toBe(202);
  const page = await gw.request('GET', '/api/v1/emails?limit=1');
  expect(page.status).toBe(200);
  expect(page.body).toMatchObject({ has_more: true, next_cursor: page.body.data[0].id });
  expect(page.body.data[0]).toMatchObject({ status: 'queued', last_error: null, sent_at: null });
  const next = await gw.request('GET', `/api/v1/emails?limit=1&starting_after=${page.body.next_cursor}`);
  expect(next.body.data[0].id < page.body.data[0].id).toBe(true);
  expect(gw.peers.notification.requestsTo('listEmails').at(-1)).toMatchObject({
    account_id: gw.account,
    page: { limit: 1, starting_after: page.body.next_cursor },
  });
});

it('email_on_purchase that is not a boolean is refused with 400 before the product service is asked', async () => {
  const refused = await gw.request('PATCH', `/api/v1/products/${product}`, { email_on_purchase: 'no' });
  expect(refused.status).toBe(400);
  expect(JSON.stringify(refused.body)).toContain('email_on_purchase');
  expect(gw.peers.product.requestsTo('updateProduct')).toHaveLength(0);
});
