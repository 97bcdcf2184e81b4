import { connectMongo } from '@licensing/runtime';
import type { Connection } from 'mongoose';
import { EventLog } from '../support/events';
import { client, startStack, type Stack } from '../support/stack';
import { WebhookReceiver } from '../support/webhook-receiver';

// DELETE /api/v1/licenses/{key} through the running system: the licence and its activations go, its key
// validates as not_found from then on (the gateways' caches follow license.deleted, which a webhook
// endpoint can subscribe to), and its License credential is refused. Refused while a subscription bills
// the licence, for another account's key, and for an app credential.

let stack: Stack;
let events: EventLog;
let receiver: WebhookReceiver;
let licenseDb: Connection;
let api: ReturnType<typeof client>;
let product: string;

beforeAll(async () => {
  stack = await startStack();
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  receiver = await WebhookReceiver.start();
  licenseDb = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_license`);
  api = client(stack.url, (await stack.newAccount()).apiKey);
  product = (await api('POST', '/api/v1/products', { name: 'Deletable', policy: { max_activations: 3 } })).body.id;
});

afterAll(async () => {
  await licenseDb?.close();
  await receiver?.stop();
  await events?.close();
  await stack?.stop();
});

const issue = async (via = api, productId = product) => {
  const res = await via('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'del@example.com' });
  expect(res.status).toBe(201);
  return res.body.license as { id: string; key: string };
};

it('deletes the licence and its activations: validation answers not_found, its credential stops working, license.deleted is delivered', async () => {
  const hook = await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/deleted`, events: ['license.deleted'] });
  expect(hook.status).toBe(201);
  const license = await issue();
  const kept = await issue();
  const asLicense = client(stack.url);
  const credential = { authorization: `License ${license.key}` };
  expect((await api('POST', `/api/v1/licenses/${license.key}/activations`, { fingerprint: 'm-1' })).status).toBe(201);
  // Validated first, so the gateway's cache holds the licence: the deletion must evict it.
  const before = await api('GET', `/api/v1/licenses/validate?license_key=${license.key}&fingerprint=m-1`);
  expect(before.body).toMatchObject({ valid: true, code: 'valid' });
  expect((await asLicense('GET', `/api/v1/licenses/${license.key}`, undefined, credential)).status).toBe(200);

  const deleted = await api('DELETE', `/api/v1/licenses/${license.key}`);
  expect(deleted.status).toBe(204);

  const after = await api('GET', `/api/v1/licenses/validate?license_key=${license.key}&fingerprint=m-1`);
  expect(after.body).toMatchObject({ valid: false, code: 'not_found' });
  expect((await api('POST', '/api/v1/keys/validate', { key: license.key })).body).toMatchObject({ code: 'not_found' });
  expect((await api('GET', `/api/v1/licenses/${license.key}`)).status).toBe(404);
  expect((await asLicense('GET', `/api/v1/licenses/${license.key}`, undefined, credential)).status).toBe(401);
  expect((await api('GET', `/api/v1/licenses/${license.key}/activations`)).status).toBe(404);
  expect(await licenseDb.collection('activations').countDocuments({ license_id: license.id })).toBe(0);
  expect(await licenseDb.collection('licenses').countDocuments({ _id: license.id } as never)).toBe(0);
  // Another licence of the account is untouched.
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${kept.key}`)).body).toMatchObject({ valid: true });

  const deletedData = (e: { data: unknown }) => (e.data as { license: { id: string } }).license;
  const event = await events.waitFor((e) => e.type === 'license.deleted' && deletedData(e).id === license.id);
  expect(deletedData(event)).toMatchObject({ id: license.id, key: license.key, product_id: product });
  const [delivered] = await receiver.waitFor('/deleted', 1);
  expect(JSON.parse(delivered.body)).toMatchObject({ type: 'license.deleted', data: { license: { id: license.id } } });

  // Gone: a second DELETE finds nothing.
  expect((await api('DELETE', `/api/v1/licenses/${license.key}`)).status).toBe(404);
});

it('is refused with 409 while a subscription bills the licence, and allowed once it is canceled', async () => {
  const license = await issue();
  const billedBy = (status: string) =>
    licenseDb.collection('licenses').updateOne({ _id: license.id } as never, {
      $set: {
        subscription: {
          id: 'sub_01JD8Z3K6Q2W4E5R6T7Y8V9XDE',
          status,
          trial_end: '',
          paid_through: '',
          grace_until: '',
        },
      },
    });
  for (const status of ['active', 'trialing', 'past_due', 'unpaid']) {
    await billedBy(status);
    const refused = await api('DELETE', `/api/v1/licenses/${license.key}`);
    expect([status, refused.status, refused.body.code]).toEqual([status, 409, 'conflict']);
    expect(refused.body.detail).toContain('sub_01JD8Z3K6Q2W4E5R6T7Y8V9XDE');
    expect((await api('GET', `/api/v1/licenses/${license.key}`)).status).toBe(200);
  }
  await billedBy('canceled');
  expect((await api('DELETE', `/api/v1/licenses/${license.key}`)).status).toBe(204);
});

it("another account's key is not found, and its licence stays", async () => {
  const other = client(stack.url, (await stack.newAccount()).apiKey);
  const otherProduct = (await other('POST', '/api/v1/products', { name: 'Theirs' })).body.id;
  const theirs = await issue(other, otherProduct);
  const res = await api('DELETE', `/api/v1/licenses/${theirs.key}`);
  expect([res.status, res.body.code]).toEqual([404, 'not_found']);
  expect((await other('GET', `/api/v1/licenses/validate?license_key=${theirs.key}`)).body).toMatchObject({
    valid: true,
  });
});

it('needs a full-scope key: a License credential cannot delete its own licence', async () => {
  const license = await issue();
  const res = await client(stack.url)('DELETE', `/api/v1/licenses/${license.key}`, undefined, {
    authorization: `License ${license.key}`,
  });
  expect(res.status).toBe(403);
  expect((await api('GET', `/api/v1/licenses/${license.key}`)).status).toBe(200);
});
