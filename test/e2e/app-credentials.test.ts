import { randomBytes } from 'node:crypto';
import { EXAMPLE_LICENSE_KEY } from '@licensing/proto';
import { client, startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';

// The app credentials (docs/api.md, "App credentials"): "Authorization: License <licence key>" acts
// as that licence on the app routes only, for itself only; a validate-scope key calls the same
// routes for any licence of its account; both spend budgets of their own (per licence per minute,
// the account's app allowance per hour), never the full keys' quota.

let stack: Stack;
type Api = ReturnType<typeof client>;
let vendor: Api;
let otherVendor: Api;
let appKey: Api;
let productId: string;
let otherProductId: string;

/** A client that sends "Authorization: License <key>". */
const asLicense =
  (key: string): Api =>
  (method, path, body, headers = {}) =>
    client(stack.url)(method, path, body, { authorization: `License ${key}`, ...headers });

const newLicense = async (api: Api, product: string): Promise<string> => {
  const res = await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'buyer@example.com' });
  expect(res.status).toBe(201);
  return res.body.license_key;
};

beforeAll(async () => {
  stack = await startStack();
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  vendor = client(stack.url, acct.apiKey);
  const validate = await stack.admin.createApiKey({
    account_id: acct.accountId,
    scope: 'validate',
    name: 'app',
    actor: 'test',
  });
  appKey = client(stack.url, validate.secret);
  productId = (await vendor('POST', '/api/v1/products', { name: 'App', policy: { max_activations: 3 } })).body.id;
  const other = await stack.newAccount();
  await stack.admin.updateAccount({ id: other.accountId, per_minute_limit: 100_000 });
  otherVendor = client(stack.url, other.apiKey);
  otherProductId = (await otherVendor('POST', '/api/v1/products', { name: 'Theirs' })).body.id;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('the licence as a credential', () => {
  it('calls every route it is allowed, for its own licence, and never sees the vendor metadata', async () => {
    const key = await newLicense(vendor, productId);
    expect((await vendor('PATCH', `/api/v1/licenses/${key}`, { metadata: { crm: 'secret-42' } })).status).toBe(200);
    const app = asLicense(key);

    const byQuery = await app('GET', `/api/v1/licenses/validate?license_key=${key}`);
    expect(byQuery.status).toBe(200);
    expect(byQuery.body.valid).toBe(true);
    expect(byQuery.headers.get('ratelimit-policy')).toBe(
      '"app_hour";q=100000;w=3600, "license_minute";q=60;w=60, "app_minute";q=60;w=60',
    );

    const byBody = await app('POST', '/api/v1/keys/validate', { key: key.toLowerCase() });
    expect(byBody.status).toBe(200);
    expect(byBody.body.valid).toBe(true);
    expect(byBody.body.license.metadata).toEqual({});

    const own = await app('GET', `/api/v1/licenses/${key}`);
    expect(own.status).toBe(200);
    expect(own.body.key).toBe(key);
    expect(own.body.metadata).toEqual({});
    expect(own.body.customer_email).toBeNull();

    const activated = await app('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'machine-1' });
    expect(activated.status).toBe(201);
    const listed = await app('GET', `/api/v1/licenses/${key}/activations`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([activated.body.id]);
    expect((await app('POST', `/api/v1/licenses/${key}/file`, { fingerprint: 'machine-1' })).status).toBe(201);
    const keys = await app('GET', `/api/v1/products/${productId}/signing-keys`);
    expect(keys.status).toBe(200);
    expect(keys.body.data.length).toBeGreaterThan(0);
    expect((await app('DELETE', `/api/v1/licenses/${key}/activations/${activated.body.id}`)).status).toBe(204);
  });

  it('another licence (path, query or body) or another product answers 404, as if it did not exist', async () => {
    const key = await newLicense(vendor, productId);
    const sibling = await newLicense(vendor, productId);
    const theirs = await newLicense(otherVendor, otherProductId);
    const secondProduct = (await vendor('POST', '/api/v1/products', { name: 'Second' })).body.id;
    const app = asLicense(key);
    const refusals = [
      await app('GET', `/api/v1/licenses/${sibling}`),
      await app('GET', `/api/v1/licenses/${theirs}`),
      await app('GET', `/api/v1/licenses/validate?license_key=${sibling}`),
      await app('POST', '/api/v1/keys/validate', { key: sibling }),
      await app('POST', '/api/v1/keys/validate', { key: theirs }),
      await app('POST', `/api/v1/licenses/${sibling}/activations`, { fingerprint: 'm' }),
      await app('GET', `/api/v1/licenses/${theirs}/activations`),
      await app('DELETE', `/api/v1/licenses/${sibling}/activations/act_x`),
      await app('POST', `/api/v1/licenses/${sibling}/file`, {}),
      await app('GET', `/api/v1/products/${secondProduct}/signing-keys`),
      await app('GET', `/api/v1/products/${otherProductId}/signing-keys`),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('not_found');
    }
    // Nothing was done to the sibling.
    expect((await vendor('GET', `/api/v1/licenses/${sibling}/activations`)).body.data).toEqual([]);
  });

  it('every other route answers 403 with a detail naming what a licence may do', async () => {
    const key = await newLicense(vendor, productId);
    const app = asLicense(key);
    for (const [method, path, body] of [
      ['GET', '/api/v1/licenses'],
      ['POST', '/api/v1/products', { name: 'Nope' }],
      ['GET', `/api/v1/products/${productId}`],
      ['PATCH', `/api/v1/licenses/${key}`, { metadata: { a: 'b' } }],
      ['POST', `/api/v1/licenses/${key}/revoke`],
      ['GET', '/api/v1/status'],
      ['GET', '/api/v1/webhooks'],
    ] as [string, string, unknown?][]) {
      const r = await app(method, path, body);
      expect([method, path, r.status]).toEqual([method, path, 403]);
      expect(r.body.code).toBe('forbidden');
      expect(r.body.detail).toMatch(/License credential may only validate its licence/);
    }
    expect((await vendor('GET', `/api/v1/licenses/${key}`)).body.status).toBe('active');
  });

  it('a suspended, revoked or unknown licence gets the validation answer on the validation routes and 401 elsewhere', async () => {
    const suspended = await newLicense(vendor, productId);
    const revoked = await newLicense(vendor, productId);
    // Known to the gateway while active: the events must take that back.
    expect((await asLicense(suspended)('GET', `/api/v1/licenses/${suspended}`)).status).toBe(200);
    expect((await vendor('POST', `/api/v1/licenses/${suspended}/suspend`)).status).toBe(200);
    expect((await vendor('POST', `/api/v1/licenses/${revoked}/revoke`)).status).toBe(200);
    const unknown = EXAMPLE_LICENSE_KEY;

    for (const [key, code] of [
      [suspended, 'suspended'],
      [revoked, 'revoked'],
      [unknown, 'not_found'],
    ]) {
      const app = asLicense(key);
      await eventually(async () => {
        const elsewhere = await app('GET', `/api/v1/licenses/${key}`);
        expect(elsewhere.status).toBe(401);
        expect(elsewhere.body.code).toBe('unauthorized');
      });
      const byQuery = await app('GET', `/api/v1/licenses/validate?license_key=${key}`);
      expect([byQuery.status, byQuery.body.valid, byQuery.body.code]).toEqual([200, false, code]);
      const byBody = await app('POST', '/api/v1/keys/validate', { key });
      expect([byBody.status, byBody.body.valid, byBody.body.code]).toEqual([200, false, code]);
      expect((await app('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'm' })).status).toBe(401);
      expect((await app('POST', `/api/v1/licenses/${key}/file`, {})).status).toBe(401);
      expect((await app('GET', '/api/v1/licenses')).status).toBe(401);
    }

    // Reinstated: the licence acts again (the event reaches the gateway's memory of it).
    expect((await vendor('POST', `/api/v1/licenses/${suspended}/reinstate`)).status).toBe(200);
    await eventually(async () =>
      expect((await asLicense(suspended)('GET', `/api/v1/licenses/${suspended}`)).status).toBe(200),
    );
  });

  it('a malformed License credential is 401 in the one error format', async () => {
    const key = await newLicense(vendor, productId);
    for (const header of [
      'License',
      'License ',
      'License not!a!key',
      `License ${key.slice(0, -1)}${key.endsWith('X') ? 'Y' : 'X'}`, // the check characters are wrong (a key ending in X stayed itself)
      `License ${key} extra`,
      `License ${'A'.repeat(80)}`,
      `license ${key}`,
    ]) {
      const r = await client(stack.url)('GET', `/api/v1/licenses/validate?license_key=${key}`, undefined, {
        authorization: header,
      });
      expect([header, r.status]).toEqual([header, 401]);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body.code).toBe('unauthorized');
    }
  });
});

describe('a validate-scope key', () => {
  it('calls the app routes for any licence of its account, and gets 404 for another account', async () => {
    const key = await newLicense(vendor, productId);
    const theirs = await newLicense(otherVendor, otherProductId);
    const activated = await appKey('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'machine-1' });
    expect(activated.status).toBe(201);
    expect((await appKey('GET', `/api/v1/licenses/${key}/activations`)).status).toBe(200);
    expect((await appKey('POST', `/api/v1/licenses/${key}/file`, { fingerprint: 'machine-1' })).status).toBe(201);
    expect((await appKey('GET', `/api/v1/products/${productId}/signing-keys`)).status).toBe(200);
    const read = await appKey('GET', `/api/v1/licenses/${key}`);
    expect(read.status).toBe(200);
    expect(read.body.metadata).toEqual({});
    expect((await appKey('DELETE', `/api/v1/licenses/${key}/activations/${activated.body.id}`)).status).toBe(204);

    expect((await appKey('GET', `/api/v1/licenses/${theirs}`)).status).toBe(404);
    expect((await appKey('POST', `/api/v1/licenses/${theirs}/activations`, { fingerprint: 'm' })).status).toBe(404);
    expect((await appKey('POST', `/api/v1/licenses/${theirs}/file`, {})).status).toBe(404);
    expect((await appKey('GET', `/api/v1/products/${otherProductId}/signing-keys`)).status).toBe(404);
    expect((await otherVendor('GET', `/api/v1/licenses/${theirs}/activations`)).body.data).toEqual([]);

    const refused = await appKey('GET', '/api/v1/licenses');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/validate scope/);
    expect((await appKey('GET', '/api/v1/status')).body.rate_limits.per_license_per_minute).toBe(60);
  });
});

describe('a budget of its own', () => {
  it('the 61st request in a minute from one licence is 429 with Retry-After; another licence of the account still passes', async () => {
    const noisy = await newLicense(vendor, productId);
    const quiet = await newLicense(vendor, productId);
    const app = asLicense(noisy);
    for (let i = 0; i < 60; i++) {
      const r = await app('GET', `/api/v1/licenses/validate?license_key=${noisy}`);
      expect([i, r.status, r.headers.get('ratelimit')]).toEqual([i, 200, expect.anything()]);
    }
    const refused = await app('GET', `/api/v1/licenses/validate?license_key=${noisy}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"license_minute";r=0;t=\d+$/);
    expect(refused.body.detail).toMatch(/this licence/);
    // The licence's budget is the licence's, whoever names it: the app's validate key too.
    expect((await appKey('POST', '/api/v1/keys/validate', { key: noisy })).status).toBe(429);
    expect((await appKey('GET', `/api/v1/licenses/${noisy}/activations`)).status).toBe(429);

    const other = await asLicense(quiet)('GET', `/api/v1/licenses/validate?license_key=${quiet}`);
    expect(other.status).toBe(200);
    expect(other.body.valid).toBe(true);
    expect((await appKey('POST', '/api/v1/keys/validate', { key: quiet })).status).toBe(200);
    // The vendor's full key is untouched.
    expect((await vendor('GET', `/api/v1/licenses/${noisy}`)).status).toBe(200);
  });

  it('free plan: app traffic never spends the quota of the full keys', async () => {
    const acct = await stack.newAccount('free');
    const full = client(stack.url, acct.apiKey);
    const product = (await full('POST', '/api/v1/products', { name: 'Free app' })).body.id;
    const keys = [await newLicense(full, product), await newLicense(full, product)];
    // 110 app requests: more than the free plan's hourly quota of 100, within two licences' minutes.
    for (let i = 0; i < 110; i++) {
      const key = keys[i % 2];
      const r = await asLicense(key)('GET', `/api/v1/licenses/validate?license_key=${key}`);
      expect(r.status).toBe(200);
    }
    const created = await full('POST', '/api/v1/products', { name: 'Still allowed' });
    expect(created.status).toBe(201);
    expect(created.headers.get('ratelimit-policy')).toMatch(/^"hour";q=100;w=3600/);
    expect(created.headers.get('ratelimit')).not.toMatch(/^"hour";r=0/);
  });
});

describe("freeing machines with app credentials spends the customer's deactivations", () => {
  const machines = async (key: string, fingerprints: string[]) => {
    const ids: string[] = [];
    for (const fingerprint of fingerprints) {
      const res = await vendor('POST', `/api/v1/licenses/${key}/activations`, { fingerprint });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    return ids;
  };

  it('a License credential and a validate-scope key share customer_deactivations_per_30_days; the full key frees the rest', async () => {
    const product = (
      await vendor('POST', '/api/v1/products', {
        name: 'Two frees',
        policy: { max_activations: 5, customer_deactivations_per_30_days: 2 },
      })
    ).body.id;
    const key = await newLicense(vendor, product);
    const ids = await machines(key, ['m1', 'm2', 'm3', 'm4']);
    expect((await asLicense(key)('DELETE', `/api/v1/licenses/${key}/activations/${ids[0]}`)).status).toBe(204);
    // Naming the fingerprint of a node-locked machine changes nothing: only a floating seat is "released".
    expect((await appKey('DELETE', `/api/v1/licenses/${key}/activations/${ids[1]}?fingerprint=m2`)).status).toBe(204);
    const refused = await asLicense(key)('DELETE', `/api/v1/licenses/${key}/activations/${ids[2]}`);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/freed 2 machines of this licence in the last 30 days/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(29 * 86_400);
    expect((await appKey('DELETE', `/api/v1/licenses/${key}/activations/${ids[2]}`)).status).toBe(429);
    // Still active, and the vendor's own key is not counted.
    expect((await vendor('GET', `/api/v1/licenses/${key}/activations`)).body.data).toHaveLength(2);
    expect((await vendor('DELETE', `/api/v1/licenses/${key}/activations/${ids[2]}`)).status).toBe(204);
    expect((await vendor('DELETE', `/api/v1/licenses/${key}/activations/${ids[3]}`)).status).toBe(204);
  });

  it('0 leaves freeing machines to the vendor: 409', async () => {
    const product = (
      await vendor('POST', '/api/v1/products', {
        name: 'Vendor frees',
        policy: { customer_deactivations_per_30_days: 0 },
      })
    ).body.id;
    const key = await newLicense(vendor, product);
    const [id] = await machines(key, ['m1']);
    const refused = await asLicense(key)('DELETE', `/api/v1/licenses/${key}/activations/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/freed by the vendor only/);
  });

  it('an app releasing its own floating seat (its fingerprint) is never counted', async () => {
    const product = (
      await vendor('POST', '/api/v1/products', {
        name: 'Floating frees',
        policy: { max_activations: 2, lease_seconds: 300, customer_deactivations_per_30_days: 1 },
      })
    ).body.id;
    const key = await newLicense(vendor, product);
    const app = asLicense(key);
    for (let round = 0; round < 3; round++) {
      const seat = await app('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'own' });
      expect(seat.status).toBe(201);
      expect((await app('DELETE', `/api/v1/licenses/${key}/activations/${seat.body.id}?fingerprint=own`)).status).toBe(
        204,
      );
    }
    // Another machine's floating seat is counted: the one allowed, then 429.
    const [a, b] = await machines(key, ['other-1', 'other-2']);
    expect((await app('DELETE', `/api/v1/licenses/${key}/activations/${a}?fingerprint=own`)).status).toBe(204);
    expect((await app('DELETE', `/api/v1/licenses/${key}/activations/${b}?fingerprint=own`)).status).toBe(429);
  });
});

describe('a weak imported key', () => {
  it('imports and validates with an API key, is refused as a License credential saying why, and a reroll makes it one', async () => {
    const weak = `wk${randomBytes(4).toString('hex')}`; // 10 characters
    const imported = await vendor(
      'POST',
      '/api/v1/imports?format=jsonl',
      `${JSON.stringify({ key: weak, product_id: productId, customer_email: 'old@example.com' })}\n`,
      { 'content-type': 'application/x-ndjson' },
    );
    expect(imported.status).toBe(202);
    await eventually(
      async () =>
        expect((await vendor('GET', `/api/v1/imports/${imported.body.id}`)).body).toMatchObject({ imported: 1 }),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect((await appKey('POST', '/api/v1/keys/validate', { key: weak })).body).toMatchObject({ valid: true });

    const refused = await asLicense(weak)('GET', `/api/v1/licenses/validate?license_key=${weak}`);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('unauthorized');
    expect(refused.body.detail).toMatch(/imported from another system .*10 characters, fewer than the 16.*reroll/);
    // The same answer for a weak key no licence has: it tells nothing of which exist.
    const unknown = await asLicense(`zz${randomBytes(4).toString('hex')}`)(
      'GET',
      '/api/v1/licenses/validate?license_key=x',
    );
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail).toMatch(/10 characters, fewer than the 16/);

    const rerolled = await vendor('POST', `/api/v1/licenses/${weak}/reroll`, { grace_hours: 0 });
    expect(rerolled.status).toBe(200);
    const fresh = rerolled.body.key as string;
    const ok = await asLicense(fresh)('GET', `/api/v1/licenses/validate?license_key=${fresh}`);
    expect(ok.status).toBe(200);
    expect(ok.body.valid).toBe(true);
  });
});
