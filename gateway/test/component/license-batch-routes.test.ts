import { type LicenseBatch, LicenseBatchItem, type Product } from '@licensing/proto';
import { eventually } from '../../../test/support/eventually';
import { fakeProduct, fakeVendor, productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// POST /api/v1/licenses/batch and GET /api/v1/licenses/batch/{id} at the gateway, over a licence
// service faked with what it answers (fake-licence-service.ts): 202 with Location and the job's
// shape, the job's results as the API spells them, Idempotency-Key passed on (422 for its reuse), the
// shapes the gateway refuses itself before the service is asked (1,001 items, an unknown field, none),
// and the service's refusals as 400 naming the item and 404. What the licence service itself does
// (the job, its events): services/license/test/component/license-batch.test.ts.

const products: Product[] = [];
const licences = fakeLicenceService(products);
let gw: GatewayOverFakes;
let api: GatewayOverFakes['request'];
let product: string;

beforeAll(async () => {
  gw = await startGatewayOverFakes({ product: productHandlers(products), license: licences.handlers });
  api = gw.request;
  product = (await api('POST', '/api/v1/products', { name: 'Bulk', policy: { entitlements: ['base'] } })).body.id;
});

afterAll(async () => {
  await gw?.stop();
});

const keyed = (body: unknown, key: string) =>
  fetch(`${gw.url}/api/v1/licenses/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() }));
const licencesOf = (productId: string) => licences.licences.filter((l) => l.product_id === productId);
const done = (id: string) =>
  eventually(async () => {
    const res = await api('GET', `/api/v1/licenses/batch/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('done');
    return res.body;
  });

it('issues every item once, shows the keys, and publishes each license.created and one license.batch_completed', async () => {
  const body = {
    product_id: product,
    licenses: [
      { customer_email: 'a@example.com', metadata: { order: '1' }, send_email: true },
      { customer_email: 'b@example.com', entitlements: ['pro'] },
      { customer_email: 'c@example.com', send_email: true },
    ],
  };
  const key = `bulk-${Date.now()}`;
  const res = await keyed(body, key);
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ object: 'license_batch', status: 'running', total: 3, product_id: product });
  expect(res.headers.get('location')).toBe(`/api/v1/licenses/batch/${res.body.id}`);
  expect(gw.peers.license.requestsTo('createLicenseBatch').at(-1)).toEqual({
    account_id: gw.account,
    product_id: product,
    idempotency_key: key,
    licenses: [
      { customer_email: 'a@example.com', metadata: { order: '1' }, entitlements: [], send_email: true },
      { customer_email: 'b@example.com', metadata: {}, entitlements: ['pro'], send_email: false },
      { customer_email: 'c@example.com', metadata: {}, entitlements: [], send_email: true },
    ],
  });
  const job = await done(res.body.id);
  expect(job).toMatchObject({ total: 3, issued: 3, failed: 0, waiting: 0, completed_at: expect.any(String) });
  expect(job.results.map((r: any) => [r.index, r.status, r.error])).toEqual([
    [0, 'issued', null],
    [1, 'issued', null],
    [2, 'issued', null],
  ]);
  const keys = job.results.map((r: any) => r.license_key as string);
  const first = (await api('GET', `/api/v1/licenses/${keys[0]}`)).body;
  expect(first).toMatchObject({
    customer_email: 'a@example.com',
    metadata: { order: '1' },
    id: job.results[0].license_id,
  });
  expect((await api('GET', `/api/v1/licenses/${keys[1]}`)).body.entitlements).toEqual(['base', 'pro']);
  for (const k of keys)
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${k}`)).body).toMatchObject({ valid: true });

  // The same request under the same key is the same job: nothing issued twice.
  const again = await keyed(body, key);
  expect(again.status).toBe(202);
  expect(again.body.id).toBe(job.id);
  expect(licencesOf(product)).toHaveLength(3);
  // The same key with another body: 422.
  const other = await keyed({ ...body, licenses: body.licenses.slice(1) }, key);
  expect(other.status).toBe(422);
  expect(other.body.code).toBe('idempotency_key_reused');
});

it('a batch of 1,000 licences is issued whole', async () => {
  const bulk = (await api('POST', '/api/v1/products', { name: 'Thousand' })).body.id as string;
  const licenses = Array.from({ length: 1000 }, (_, i) => ({ customer_email: `user${i}@example.com` }));
  const res = await keyed({ product_id: bulk, licenses }, `thousand-${Date.now()}`);
  expect(res.status).toBe(202);
  expect(gw.peers.license.requestsTo('createLicenseBatch').at(-1)?.licenses).toHaveLength(1000);
  const job = await done(res.body.id);
  expect(job).toMatchObject({ total: 1000, issued: 1000, failed: 0 });
  expect(new Set(job.results.map((r: any) => r.license_key)).size).toBe(1000);
});

it('refuses a batch of 1,001, an unknown product and a bad e-mail in an item (naming it), issuing nothing', async () => {
  const empty = (await api('POST', '/api/v1/products', { name: 'Nothing issued' })).body.id as string;
  const asked = gw.peers.license.requestsTo('createLicenseBatch').length;
  const many = Array.from({ length: 1001 }, (_, i) => ({ customer_email: `u${i}@example.com` }));
  const tooMany = await api('POST', '/api/v1/licenses/batch', { product_id: empty, licenses: many });
  expect(tooMany.status).toBe(400);
  expect(tooMany.body.errors[0].field).toBe('licenses');
  const badShape = await api('POST', '/api/v1/licenses/batch', {
    product_id: empty,
    licenses: [{ customer_email: 'ok@example.com' }, { customer_email: 'x@example.com', colour: 'red' }],
  });
  expect(badShape.status).toBe(400);
  expect(badShape.body.errors[0].field).toBe('licenses[1].colour');
  const none = await api('POST', '/api/v1/licenses/batch', { product_id: empty, licenses: [] });
  expect(none.status).toBe(400);
  expect(gw.peers.license.requestsTo('createLicenseBatch')).toHaveLength(asked); // refused before the service

  const unknown = await api('POST', '/api/v1/licenses/batch', {
    product_id: 'prod_01J0000000000000000000000A',
    licenses: [{ customer_email: 'a@example.com' }],
  });
  expect(unknown.status).toBe(404);
  const badEmail = await api('POST', '/api/v1/licenses/batch', {
    product_id: empty,
    licenses: [
      { customer_email: 'ok@example.com' },
      { customer_email: 'ok2@example.com' },
      { customer_email: 'not-an-email' },
    ],
  });
  expect(badEmail.status).toBe(400);
  expect(badEmail.body.errors).toEqual([
    { field: 'licenses[2].customer_email', message: 'licenses[2].customer_email must be a valid e-mail address' },
  ]);
  expect(licencesOf(empty)).toHaveLength(0);

  expect((await api('GET', '/api/v1/licenses/batch/lbat_01J0000000000000000000000A')).status).toBe(404);
  expect((await api('GET', '/api/v1/licenses/batch/nope')).status).toBe(404);
  expect((await api('GET', '/api/v1/licenses/batch')).status).toBe(405);
});

it("another account's batch is not found", async () => {
  // Another vendor's batch in the licence service's store.
  const stranger = fakeVendor();
  const theirProduct = fakeProduct(stranger, 'Theirs');
  products.push(theirProduct);
  const theirs = (await licences.handlers.createLicenseBatch!(
    {
      account_id: stranger.account.id,
      product_id: theirProduct.id,
      licenses: [LicenseBatchItem.fromPartial({ customer_email: 'theirs@example.com' })],
      idempotency_key: '',
    },
    undefined as never,
  )) as LicenseBatch;
  const res = await api('GET', `/api/v1/licenses/batch/${theirs.id}`);
  expect([res.status, res.body.code]).toEqual([404, 'not_found']);
  expect(gw.peers.license.requestsTo('getLicenseBatch').at(-1)).toEqual({ account_id: gw.account, id: theirs.id });
});
