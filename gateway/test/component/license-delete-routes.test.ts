import type { Product } from '@licensing/proto';
import { eventually } from '../../../test/support/eventually';
import { client } from '../../../test/support/stack';
import { fakeLicence, fakeProduct, fakeVendor, productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// DELETE /api/v1/licenses/{key} at the gateway, over a licence service faked with what it answers
// (fake-licence-service.ts): 204, then its key validates as not_found from this gateway at once (its
// validation cache forgets the key) and from another that remembered it by license.deleted (published
// here on the stack's stream as the licence service publishes it), and its License credential is
// refused once that event is heard; 409 while a subscription bills the licence, 404 for another
// account's key, 403 for a License credential. What the licence service itself does:
// services/license/test/component/license-delete.test.ts.

const products: Product[] = [];
const licences = fakeLicenceService(products);
let gw: GatewayOverFakes;
let api: GatewayOverFakes['request'];
let product: string;

beforeAll(async () => {
  gw = await startGatewayOverFakes({ product: productHandlers(products), license: licences.handlers });
  api = gw.request;
  product = (await api('POST', '/api/v1/products', { name: 'Deletable', policy: { max_activations: 3 } })).body.id;
});

afterAll(async () => {
  await gw?.stop();
});

const issue = async () => {
  const res = await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'del@example.com' });
  expect(res.status).toBe(201);
  return res.body.license as { id: string; key: string };
};

it('deletes the licence and its activations: validation answers not_found, its credential stops working, license.deleted is delivered', async () => {
  const license = await issue();
  const kept = await issue();
  const asLicense = client(gw.url);
  const credential = { authorization: `License ${license.key}` };
  const other = await gw.extraGateway();
  const otherApi = client(other.url, gw.key);
  expect((await api('POST', `/api/v1/licenses/${license.key}/activations`, { fingerprint: 'm-1' })).status).toBe(201);
  // Validated first, so both gateways' caches hold the licence: the deletion must evict it.
  const validation = `/api/v1/licenses/validate?license_key=${license.key}&fingerprint=m-1`;
  expect((await api('GET', validation)).body).toMatchObject({ valid: true, code: 'valid' });
  expect((await otherApi('GET', validation)).body).toMatchObject({ valid: true, code: 'valid' });
  expect((await asLicense('GET', `/api/v1/licenses/${license.key}`, undefined, credential)).status).toBe(200);
  const last = { ...licences.licences.find((l) => l.id === license.id)! };

  const deleted = await api('DELETE', `/api/v1/licenses/${license.key}`);
  expect(deleted.status).toBe(204);
  expect(gw.peers.license.requestsTo('deleteLicense').at(-1)).toEqual({ account_id: gw.account, key: license.key });

  // This gateway forgets the key at once.
  expect((await api('GET', validation)).body).toMatchObject({ valid: false, code: 'not_found' });
  expect((await api('POST', '/api/v1/keys/validate', { key: license.key })).body).toMatchObject({ code: 'not_found' });
  expect((await api('GET', `/api/v1/licenses/${license.key}`)).status).toBe(404);
  expect((await api('GET', `/api/v1/licenses/${license.key}/activations`)).status).toBe(404);
  // Another licence of the account is untouched.
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${kept.key}`)).body).toMatchObject({ valid: true });

  // license.deleted, as the licence service publishes it: the other gateway's cache and every gateway's
  // memory of the License credential follow it.
  await gw.publish(licences.licenceEvent('license.deleted', last));
  await eventually(
    async () => expect((await otherApi('GET', validation)).body).toMatchObject({ valid: false, code: 'not_found' }),
    { timeoutMs: 2000, intervalMs: 50 },
  );
  await eventually(
    async () =>
      expect((await asLicense('GET', `/api/v1/licenses/${license.key}`, undefined, credential)).status).toBe(401),
    { timeoutMs: 2000, intervalMs: 50 },
  );

  // Gone: a second DELETE finds nothing.
  expect((await api('DELETE', `/api/v1/licenses/${license.key}`)).status).toBe(404);
});

it('is refused with 409 while a subscription bills the licence, and allowed once it is canceled', async () => {
  const license = await issue();
  const stored = licences.licences.find((l) => l.id === license.id)!;
  for (const status of ['active', 'trialing', 'past_due', 'unpaid']) {
    stored.subscription = { id: 'sub_01JD8Z3K6Q2W4E5R6T7Y8V9XDE', status } as typeof stored.subscription;
    const refused = await api('DELETE', `/api/v1/licenses/${license.key}`);
    expect([status, refused.status, refused.body.code]).toEqual([status, 409, 'conflict']);
    expect(refused.body.detail).toContain('sub_01JD8Z3K6Q2W4E5R6T7Y8V9XDE');
    expect((await api('GET', `/api/v1/licenses/${license.key}`)).status).toBe(200);
  }
  stored.subscription!.status = 'canceled';
  expect((await api('DELETE', `/api/v1/licenses/${license.key}`)).status).toBe(204);
});

it("another account's key is not found, and its licence stays", async () => {
  const stranger = fakeVendor();
  const theirProduct = fakeProduct(stranger, 'Theirs');
  const theirs = fakeLicence(stranger, theirProduct.id, 'x@example.com');
  licences.licences.push(theirs);
  const res = await api('DELETE', `/api/v1/licenses/${theirs.key}`);
  expect([res.status, res.body.code]).toEqual([404, 'not_found']);
  expect(licences.licences).toContain(theirs);
});

it('needs a full-scope key: a License credential cannot delete its own licence', async () => {
  const license = await issue();
  const asked = gw.peers.license.requestsTo('deleteLicense').length;
  const res = await client(gw.url)('DELETE', `/api/v1/licenses/${license.key}`, undefined, {
    authorization: `License ${license.key}`,
  });
  expect(res.status).toBe(403);
  expect(gw.peers.license.requestsTo('deleteLicense')).toHaveLength(asked);
  expect((await api('GET', `/api/v1/licenses/${license.key}`)).status).toBe(200);
});
