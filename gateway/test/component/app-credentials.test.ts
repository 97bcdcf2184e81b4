import { randomBytes } from 'node:crypto';
import { EXAMPLE_LICENSE_KEY, type License, type Product } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import {
  addKey,
  appLicenseHandlers,
  credentialAccountHandlers,
  fakeAccount,
  heldLicence,
  licenceEvents,
  signingKeyHandlers,
  type FakeAccount,
} from './fake-credential-answers';
import { productHandlers } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// The app credentials (docs/api.md, "App credentials"): "Authorization: License <licence key>" acts
// as that licence on the app routes only, for itself only; a validate-scope key calls the same
// routes for any licence of its account; both spend budgets of their own (per licence per minute,
// the account's app allowance per hour), never the full keys' quota. The gateway decides all of it,
// over real Redis and NATS, from what the faked services say of keys and licences
// (fake-credential-answers.ts; a transition's event goes on the stream as the licence service's
// would). What the licence service decides of the machines an app frees:
// services/license/test/component/app-deactivations.test.ts.

type Api = ReturnType<typeof client>;
const accounts: FakeAccount[] = [];
const licences: License[] = [];
const products: Product[] = [];
/** Product id → its account, for the signing keys. */
const productOwners = new Map<string, string>();
let events: Awaited<ReturnType<typeof licenceEvents>>;
const licenceService = appLicenseHandlers(licences, (type, l) => events.publish(type, l));
let h: GatewayWithFakeServices;
let vendorAcct: FakeAccount;
let vendor: Api;
let otherAcct: FakeAccount;
let otherVendor: Api;
let appKey: Api;
let productId: string;
let otherProductId: string;

const asLicense =
  (key: string): Api =>
  (method, path, body, headers = {}) =>
    client(h.url)(method, path, body, { authorization: `License ${key}`, ...headers });

const newProduct = (acct: FakeAccount) => {
  const id = newId('prod');
  productOwners.set(id, acct.account.id);
  return id;
};
/** A licence the licence service holds (as one issued through the API): its key. */
const newLicense = (acct: FakeAccount, product: string): string => {
  const l = heldLicence(acct.account.id, product);
  licences.push(l);
  return l.key;
};

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: {
      account: credentialAccountHandlers(accounts),
      product: { ...productHandlers(products), ...signingKeyHandlers(productOwners) },
      license: licenceService,
    },
  });
  events = await licenceEvents(h.topology);
  vendorAcct = fakeAccount('enterprise', { per_minute_limit: 100_000 });
  otherAcct = fakeAccount('enterprise', { per_minute_limit: 100_000 });
  accounts.push(vendorAcct, otherAcct);
  vendor = client(h.url, vendorAcct.keys[0].secret);
  otherVendor = client(h.url, otherAcct.keys[0].secret);
  appKey = client(h.url, addKey(vendorAcct, 'validate'));
  productId = newProduct(vendorAcct);
  otherProductId = newProduct(otherAcct);
});

afterAll(async () => {
  await events?.close();
  await h?.stop();
});

describe('the licence as a credential', () => {
  it('calls every route it is allowed, for its own licence, and never sees the vendor metadata', async () => {
    const key = newLicense(vendorAcct, productId);
    licences.find((l) => l.key === key)!.metadata = { crm: 'secret-42' };
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
    const key = newLicense(vendorAcct, productId);
    const sibling = newLicense(vendorAcct, productId);
    const theirs = newLicense(otherAcct, otherProductId);
    const secondProduct = newProduct(vendorAcct);
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
    const key = newLicense(vendorAcct, productId);
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
    const suspended = newLicense(vendorAcct, productId);
    const revoked = newLicense(vendorAcct, productId);
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
    const key = newLicense(vendorAcct, productId);
    for (const header of [
      'License',
      'License ',
      'License not!a!key',
      `License ${key.slice(0, -1)}${key.endsWith('X') ? 'Y' : 'X'}`, // the check characters are wrong (a key ending in X stayed itself)
      `License ${key} extra`,
      `License ${'A'.repeat(80)}`,
      `license ${key}`,
    ]) {
      const r = await client(h.url)('GET', `/api/v1/licenses/validate?license_key=${key}`, undefined, {
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
    const key = newLicense(vendorAcct, productId);
    const theirs = newLicense(otherAcct, otherProductId);
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
    const noisy = newLicense(vendorAcct, productId);
    const quiet = newLicense(vendorAcct, productId);
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
    const acct = fakeAccount('free');
    accounts.push(acct);
    const full = client(h.url, acct.keys[0].secret);
    const product = newProduct(acct);
    const keys = [newLicense(acct, product), newLicense(acct, product)];
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
  it('both app credentials free a machine as scope validate, naming the fingerprint they send; the full key as full', async () => {
    const key = newLicense(vendorAcct, productId);
    const ids: string[] = [];
    for (const fingerprint of ['m1', 'm2', 'm3']) {
      const res = await vendor('POST', `/api/v1/licenses/${key}/activations`, { fingerprint });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    expect((await asLicense(key)('DELETE', `/api/v1/licenses/${key}/activations/${ids[0]}`)).status).toBe(204);
    expect((await appKey('DELETE', `/api/v1/licenses/${key}/activations/${ids[1]}?fingerprint=m2`)).status).toBe(204);
    expect((await vendor('DELETE', `/api/v1/licenses/${key}/activations/${ids[2]}`)).status).toBe(204);
    const sent = h.fakes.license.requestsTo('deactivate').filter((r) => r.key === key);
    expect(sent.map((r) => [r.activation_id, r.key_scope, r.fingerprint])).toEqual([
      [ids[0], 'validate', ''],
      [ids[1], 'validate', 'm2'],
      [ids[2], 'full', ''],
    ]);
  });

  it("the licence service's refusals answer 429 with its Retry-After, and 409 saying why", async () => {
    const key = newLicense(vendorAcct, productId);
    h.fakes.license.handle({
      deactivate: ({ key: k }) => {
        if (k !== key) throw AppError.notFound('license');
        throw AppError.rateLimited(
          'the customer has freed 2 machines of this licence in the last 30 days (the policy allows 2)',
          29 * 86_400 + 10,
        );
      },
    });
    try {
      const refused = await asLicense(key)('DELETE', `/api/v1/licenses/${key}/activations/act_x`);
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatch(/freed 2 machines of this licence in the last 30 days/);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(29 * 86_400);
      h.fakes.license.handle({
        deactivate: () => {
          throw new AppError('conflict', 'machines of this licence are freed by the vendor only');
        },
      });
      const vendorOnly = await asLicense(key)('DELETE', `/api/v1/licenses/${key}/activations/act_x`);
      expect(vendorOnly.status).toBe(409);
      expect(vendorOnly.body.detail).toMatch(/freed by the vendor only/);
    } finally {
      h.fakes.license.handle({ deactivate: licenceService.deactivate });
    }
  });
});

describe('a weak imported key', () => {
  it('imports and validates with an API key, is refused as a License credential saying why, and a reroll makes it one', async () => {
    const weak = `wk${randomBytes(4).toString('hex')}`; // 10 characters
    // Imported from another system: the licence service holds it under its old key.
    licences.push(heldLicence(vendorAcct.account.id, productId, weak));
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
