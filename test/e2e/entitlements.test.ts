import { randomBytes } from 'node:crypto';
import { connectMongo } from '@licensing/runtime';
import { client } from '../support/stack';
import { dashboardOwner, fieldError } from '../support/fixture';
import { useSharedStack } from '../support/shared-stack';
import { eventually } from '../support/eventually';

// Entitlements end to end (docs/api.md, "Entitlements"): a product's policy names feature codes (live:
// a change reaches its existing licences), a licence adds its own, and the effective set (both, sorted)
// shows in licence answers, validation
// answers, licence files and events; a validation that asks for codes the licence lacks answers
// entitlements_missing after status and activation; bad lists are 400 with nothing written; the
// gateways' validation caches follow every change; the dashboard edits both.

const f = useSharedStack();
/** Each test's own account and key: the suite sends more than one key's minute allows. */
let api: ReturnType<typeof client>;
beforeEach(async () => {
  api = client(f.stack.url, (await f.stack.newAccount()).apiKey);
});

async function product(policy: Record<string, unknown>) {
  const res = await api('POST', '/api/v1/products', { name: `Ent ${randomBytes(3).toString('hex')}`, policy });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function issue(productId: string, email = 'ent@example.com') {
  const res = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: email });
  expect(res.status).toBe(201);
  return res.body.license_key as string;
}

const validate = (key: string, more: Record<string, unknown> = {}, via?: ReturnType<typeof client>) =>
  (via ?? api)('POST', '/api/v1/keys/validate', { key, ...more });

/** The problem's field errors as "field: message". */
const problems = (body: { errors?: { field: string; message: string }[] }) =>
  (body.errors ?? []).map((e) => `${e.field}: ${e.message}`);

describe('the effective set', () => {
  it('is the policy and the licence extras, sorted, in licence answers and both validation answers', async () => {
    const productId = await product({ entitlements: ['sync', 'pdf-export'] });
    expect((await api('GET', `/api/v1/products/${productId}`)).body.policy.entitlements).toEqual([
      'sync',
      'pdf-export',
    ]);
    const key = await issue(productId);
    const read = await api('GET', `/api/v1/licenses/${key}`);
    expect(read.body).toMatchObject({
      entitlements: ['pdf-export', 'sync'],
      extra_entitlements: [],
      policy: { entitlements: ['sync', 'pdf-export'] },
    });

    const patched = await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['beta_ui', 'sync', 'a.b-c'] });
    expect(patched.status).toBe(200);
    expect(patched.body.entitlements).toEqual(['a.b-c', 'beta_ui', 'pdf-export', 'sync']);
    expect(patched.body.extra_entitlements).toEqual(['beta_ui', 'sync', 'a.b-c']);

    const long = await validate(key);
    expect(long.body).toMatchObject({
      valid: true,
      code: 'valid',
      entitlements: ['a.b-c', 'beta_ui', 'pdf-export', 'sync'],
    });
    expect(long.body.license.entitlements).toEqual(['a.b-c', 'beta_ui', 'pdf-export', 'sync']);
    const short = await api('GET', `/api/v1/licenses/validate?license_key=${key}`);
    expect(short.body.entitlements).toEqual(['a.b-c', 'beta_ui', 'pdf-export', 'sync']);
    const list = await api('GET', `/api/v1/licenses?product_id=${productId}`);
    expect(list.body.data[0].entitlements).toEqual(['a.b-c', 'beta_ui', 'pdf-export', 'sync']);
    // An unknown key shows none.
    expect((await validate('ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ')).body.entitlements).toEqual([]);
  });

  it('PATCH replaces the extras whole, [] clears them, and other fields leave them as they are', async () => {
    const key = await issue(await product({ entitlements: ['base'] }));
    await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['one', 'two'] });
    const replaced = await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['three'] });
    expect(replaced.body).toMatchObject({ entitlements: ['base', 'three'], extra_entitlements: ['three'] });
    const other = await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { crm: 'X' } });
    expect(other.body).toMatchObject({ entitlements: ['base', 'three'], extra_entitlements: ['three'] });
    const cleared = await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: [] });
    expect(cleared.body).toMatchObject({ entitlements: ['base'], extra_entitlements: [] });
  });

  it('is in the licence file payload and in license.* events', async () => {
    const key = await issue(await product({ entitlements: ['pdf-export'] }), 'file@example.com');
    const created = await f.events.waitFor(
      (e) => e.type === 'license.created' && (e.data as { license: { key: string } }).license.key === key,
    );
    expect((created.data as { license: { entitlements: string[] } }).license.entitlements).toEqual(['pdf-export']);
    await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['extra'] });
    const updated = await f.events.waitFor(
      (e) =>
        e.type === 'license.updated' &&
        (e.data as { license: { key: string; entitlements: string[] } }).license.key === key &&
        (e.data as { license: { entitlements: string[] } }).license.entitlements.length === 2,
    );
    expect((updated.data as { license: { entitlements: string[] } }).license.entitlements).toEqual([
      'extra',
      'pdf-export',
    ]);
    const file = await api('POST', `/api/v1/licenses/${key}/file`, {});
    expect(file.status).toBe(201);
    const payload = JSON.parse(Buffer.from(file.body.payload, 'base64url').toString('utf8'));
    expect(payload.entitlements).toEqual(['extra', 'pdf-export']);
  });
});

describe("a product's entitlements are live", () => {
  it('reach its existing licences at once: licence answers, both validations, files and events', async () => {
    const policy = { duration_days: 30, entitlements: ['pdf-export'] };
    const productId = await product(policy);
    const key = await issue(productId);
    await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['own'] });
    expect((await validate(key, { entitlements: ['sync'] })).body.code).toBe('entitlements_missing');
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.entitlements).toEqual([
      'own',
      'pdf-export',
    ]);

    // The plan gains a feature: every licence of it has it, without a renewal.
    const gained = await api('PATCH', `/api/v1/products/${productId}`, {
      policy: { ...policy, entitlements: ['pdf-export', 'sync'] },
    });
    expect(gained.status).toBe(200);
    // This gateway made the change: its next answers already see it (from the store, then from memory).
    for (let i = 0; i < 2; i++) {
      expect((await validate(key, { entitlements: ['sync', 'own'] })).body).toMatchObject({
        valid: true,
        code: 'valid',
        entitlements: ['own', 'pdf-export', 'sync'],
        license: { entitlements: ['own', 'pdf-export', 'sync'] },
      });
      expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body).toMatchObject({
        valid: true,
        entitlements: ['own', 'pdf-export', 'sync'],
      });
    }
    // Licence answers follow the product through the licence service's product cache (product.updated).
    await eventually(async () =>
      expect((await api('GET', `/api/v1/licenses/${key}`)).body).toMatchObject({
        entitlements: ['own', 'pdf-export', 'sync'],
        extra_entitlements: ['own'],
        policy: { entitlements: ['pdf-export', 'sync'] },
      }),
    );
    await eventually(async () =>
      expect((await api('GET', `/api/v1/licenses?product_id=${productId}`)).body.data[0].entitlements).toEqual([
        'own',
        'pdf-export',
        'sync',
      ]),
    );
    const file = await api('POST', `/api/v1/licenses/${key}/file`, {});
    expect(file.status).toBe(201);
    expect(JSON.parse(Buffer.from(file.body.payload, 'base64url').toString('utf8')).entitlements).toEqual([
      'own',
      'pdf-export',
      'sync',
    ]);
    await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { plan: 'changed' } });
    const updated = await f.events.waitFor(
      (e) =>
        e.type === 'license.updated' &&
        (e.data as { license: { key: string; entitlements: string[] } }).license.key === key &&
        (e.data as { license: { entitlements: string[] } }).license.entitlements.includes('sync'),
    );
    expect((updated.data as { license: { entitlements: string[] } }).license.entitlements).toEqual([
      'own',
      'pdf-export',
      'sync',
    ]);

    // The plan loses one: gone from every licence of it at once (its own extras stay).
    await api('PATCH', `/api/v1/products/${productId}`, { policy: { ...policy, entitlements: ['sync'] } });
    const lost = await validate(key, { entitlements: ['pdf-export', 'own'] });
    expect(lost.body).toMatchObject({
      valid: false,
      code: 'entitlements_missing',
      next_action: 'contact_vendor',
      entitlements: ['own', 'sync'],
    });
    expect(lost.body.detail).toContain('pdf-export');
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.entitlements).toEqual([
      'own',
      'sync',
    ]);
  });

  it('are never copied into a licence, and a copy stored earlier (or none at all) is not read', async () => {
    const key = await issue(await product({ entitlements: ['kept'] }));
    await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['own'] });
    const db = await connectMongo(f.stack.topology.mongoUrl, `${f.stack.topology.dbPrefix}_license`);
    // The licence service reads the store again once a change it did not make is announced: a metadata
    // change (which writes no entitlements) does it.
    const reread = (n: number) => api('PATCH', `/api/v1/licenses/${key}`, { metadata: { old: String(n) } });
    const expectLive = async () => {
      const read = await api('GET', `/api/v1/licenses/${key}`);
      expect(read.body).toMatchObject({
        entitlements: ['kept'],
        extra_entitlements: [],
        policy: { entitlements: ['kept'] },
      });
      expect((await validate(key)).body).toMatchObject({ valid: true, entitlements: ['kept'] });
      expect((await validate(key, { entitlements: ['kept'] })).body.code).toBe('valid');
      expect((await validate(key, { entitlements: ['stale-copy'] })).body.code).toBe('entitlements_missing');
      const file = await api('POST', `/api/v1/licenses/${key}/file`, {});
      expect(JSON.parse(Buffer.from(file.body.payload, 'base64url').toString('utf8')).entitlements).toEqual(['kept']);
    };
    try {
      const stored = await db.collection('licenses').findOne({ key });
      expect(stored?.policy.entitlements).toEqual([]);
      // Stored before entitlements existed: neither field.
      const none = await db
        .collection('licenses')
        .updateOne({ key }, { $unset: { 'policy.entitlements': '', extra_entitlements: '' } });
      expect(none.modifiedCount).toBe(1);
      await reread(1);
      await expectLive();
      // Stored while licences kept a copy of their product's list: the copy is not the product's now.
      const copy = await db
        .collection('licenses')
        .updateOne({ key }, { $set: { 'policy.entitlements': ['stale-copy'] } });
      expect(copy.modifiedCount).toBe(1);
      await reread(2);
      await expectLive();
    } finally {
      await db.close();
    }
  });
});

describe('validation with entitlements', () => {
  it('is valid when every code asked for is in the set, and entitlements_missing naming the others when not', async () => {
    const key = await issue(await product({ entitlements: ['pdf-export', 'sync'] }));
    await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['beta_ui'] });
    const ok = await validate(key, { entitlements: ['sync', 'beta_ui'] });
    expect(ok.body).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
    expect((await validate(key, { entitlements: [] })).body.code).toBe('valid');
    const missing = await validate(key, { entitlements: ['sync', 'team-admin', 'sso'] });
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({
      valid: false,
      code: 'entitlements_missing',
      next_action: 'contact_vendor',
      status: 'active',
      entitlements: ['beta_ui', 'pdf-export', 'sync'],
    });
    expect(missing.body.detail).toContain('team-admin, sso');
    expect(missing.body.detail).not.toContain('sync');
    // Asked again (now from the gateway's memory): the same answer.
    const again = await validate(key, { entitlements: ['sync', 'team-admin', 'sso'] });
    expect({ ...again.body, cache_until: 0 }).toEqual({ ...missing.body, cache_until: 0 });
  });

  it('comes after status and activation: a revoked licence answers revoked, an unactivated machine not_activated', async () => {
    const key = await issue(await product({ require_activation: true }));
    expect((await validate(key, { entitlements: ['nope'] })).body.code).toBe('not_activated');
    await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'machine-1' });
    expect((await validate(key, { fingerprint: 'machine-1', entitlements: ['nope'] })).body.code).toBe(
      'entitlements_missing',
    );
    await api('POST', `/api/v1/licenses/${key}/revoke`);
    const revoked = await validate(key, { fingerprint: 'machine-1', entitlements: ['nope'] });
    expect(revoked.body).toMatchObject({ valid: false, code: 'revoked', next_action: 'contact_vendor' });
  });
});

describe('bad lists of codes', () => {
  const tooMany = Array.from({ length: 101 }, (_, i) => `code-${i}`);
  const bad: [string, unknown, string][] = [
    ['a malformed code', ['pdf-export', 'PDF Export'], '"PDF Export" is not an entitlement code'],
    ['a code starting with a dash', ['-x'], '"-x" is not an entitlement code'],
    ['a 65-character code', ['x'.repeat(65)], 'is not an entitlement code'],
    ['101 codes', tooMany, 'at most 100'],
    ['a duplicate', ['sync', 'pdf', 'sync'], 'names "sync" twice'],
    ['not an array', 'pdf-export', 'must be a list of entitlement codes'],
    ['non-string elements', ['ok', 7], '7 is not an entitlement code'],
  ];

  it.each(bad)(
    'a policy with %s is 400 naming the field and code, and no product is made',
    async (_w, codes, message) => {
      const before = (await api('GET', '/api/v1/products?limit=100')).body.data.length;
      const res = await api('POST', '/api/v1/products', { name: 'Bad', policy: { entitlements: codes } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(problems(res.body).join('\n')).toContain('policy.entitlements');
      expect(res.body.detail).toContain(message);
      expect((await api('GET', '/api/v1/products?limit=100')).body.data.length).toBe(before);
    },
  );

  it.each(bad)('a product update with %s is 400, and the policy stays', async (_w, codes, message) => {
    const productId = await product({ entitlements: ['kept'] });
    const res = await api('PATCH', `/api/v1/products/${productId}`, { policy: { entitlements: codes } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain(message);
    expect((await api('GET', `/api/v1/products/${productId}`)).body.policy.entitlements).toEqual(['kept']);
  });

  it.each(bad)("a licence's extras with %s are 400, and nothing is written", async (_w, codes, message) => {
    const key = await issue(await product({}));
    await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['before'] });
    const res = await api('PATCH', `/api/v1/licenses/${key}`, {
      customer_email: 'changed@example.com',
      entitlements: codes,
    });
    expect(res.status).toBe(400);
    expect(problems(res.body)).toEqual([expect.stringMatching(/^entitlements(\[\d+\])?: /)]);
    expect(res.body.detail).toContain(message);
    expect((await api('GET', `/api/v1/licenses/${key}`)).body).toMatchObject({
      customer_email: 'ent@example.com',
      extra_entitlements: ['before'],
    });
  });

  it.each(bad)('a validation asking for %s is 400', async (_w, codes, message) => {
    const key = await issue(await product({}));
    const res = await validate(key, { entitlements: codes });
    expect(res.status).toBe(400);
    expect(problems(res.body)).toEqual([expect.stringMatching(/^entitlements(\[\d+\])?: /)]);
    expect(res.body.detail).toContain(message);
  });

  it('null is not a list either', async () => {
    const key = await issue(await product({}));
    expect((await validate(key, { entitlements: null })).status).toBe(400);
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { entitlements: null })).status).toBe(400);
  });
});

describe('the validation cache stays exact', () => {
  it("sees a licence's new extras and its product's new entitlements, on a gateway that did not make the change", async () => {
    // The changes go through a second gateway: this one learns of them from their events alone.
    const { apiKey } = await f.stack.newAccount();
    const api = client(f.stack.url, apiKey);
    const changer = client((await f.stack.extraGateway()).url, apiKey);
    const productId = (
      await api('POST', '/api/v1/products', { name: 'Cached', policy: { duration_days: 30, entitlements: ['a'] } })
    ).body.id as string;
    const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'c@example.com' })).body
      .license_key as string;
    const ask = async (codes: string[]) => (await validate(key, { entitlements: codes }, api)).body;
    expect((await ask(['a'])).code).toBe('valid');
    expect((await ask(['b'])).code).toBe('entitlements_missing');
    expect((await ask(['b'])).code).toBe('entitlements_missing'); // (by now from memory)

    expect((await changer('PATCH', `/api/v1/licenses/${key}`, { entitlements: ['b'] })).status).toBe(200);
    await eventually(async () =>
      expect(await ask(['a', 'b'])).toMatchObject({ code: 'valid', entitlements: ['a', 'b'] }),
    );
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.entitlements).toEqual(['a', 'b']);

    // The product's entitlements change on the other gateway: this one hears product.updated, drops the
    // answers of the product's licences, and its next look-up carries the product's current set.
    const changed = await changer('PATCH', `/api/v1/products/${productId}`, {
      policy: { duration_days: 30, entitlements: ['c'] },
    });
    expect(changed.status).toBe(200);
    await eventually(async () =>
      expect(await ask(['b', 'c'])).toMatchObject({ code: 'valid', entitlements: ['b', 'c'] }),
    );
    expect((await ask(['a'])).code).toBe('entitlements_missing');
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.entitlements).toEqual(['b', 'c']);
    const fresh = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'd@example.com' }))
      .body.license_key as string;
    expect((await validate(fresh, {}, api)).body.entitlements).toEqual(['c']);
    // A renewal changes nothing of it: the set was the product's already.
    expect((await changer('POST', `/api/v1/licenses/${key}/renew`)).status).toBe(200);
    await eventually(async () => expect((await api('GET', `/api/v1/licenses/${key}`)).body.status).toBe('active'));
    expect(await ask(['b', 'c'])).toMatchObject({ code: 'valid', entitlements: ['b', 'c'] });
    // And the product loses it again, seen by both licences through this gateway.
    expect(
      (await changer('PATCH', `/api/v1/products/${productId}`, { policy: { duration_days: 30, entitlements: [] } }))
        .status,
    ).toBe(200);
    await eventually(async () => expect((await ask(['c'])).code).toBe('entitlements_missing'));
    await eventually(async () =>
      expect((await validate(fresh, { entitlements: ['c'] }, api)).body.code).toBe('entitlements_missing'),
    );
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${fresh}`)).body.entitlements).toEqual([]);
  });
});

describe('the dashboard', () => {
  const owner = () => dashboardOwner(f.stack, 'ent');
  const productForm = (entitlements: string) => ({
    name: 'Dash',
    description: '',
    price_amount: '',
    price_currency: 'USD',
    duration_days: '',
    grace_days: '0',
    max_activations: '',
    entitlements,
  });

  it('edits a policy’s entitlements and a licence’s own, and shows the effective set', async () => {
    const { web, csrf, api } = await owner();
    const made = await web.post('/dashboard/products', { _csrf: csrf, ...productForm('pdf-export, sync\nbeta_ui') });
    expect(made.status).toBe(303);
    const productId = (await api('GET', '/api/v1/products')).body.data[0].id as string;
    expect((await api('GET', `/api/v1/products/${productId}`)).body.policy.entitlements).toEqual([
      'pdf-export',
      'sync',
      'beta_ui',
    ]);
    const page = await web.get(`/dashboard/products/${productId}`);
    expect(page.html).toContain('pdf-export, sync, beta_ui');

    const edited = await web.post(`/dashboard/products/${productId}`, {
      _csrf: csrf,
      ...productForm('sync  pdf-export'),
    });
    expect(edited.status).toBe(200);
    expect((await api('GET', `/api/v1/products/${productId}`)).body.policy.entitlements).toEqual([
      'sync',
      'pdf-export',
    ]);

    const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'd@example.com' })).body
      .license_key as string;
    const licensePage = await web.get(`/dashboard/licenses/${key}`);
    expect(/data-testid="license-entitlements">(.*?)<\/p>/.exec(licensePage.html)![1]).toBe(
      '<code>pdf-export</code> <code>sync</code>',
    );
    const saved = await web.post(`/dashboard/licenses/${key}/entitlements`, {
      _csrf: csrf,
      entitlements: 'team-admin,beta',
    });
    expect(saved.status).toBe(200);
    expect(saved.html).toContain('Entitlements saved.');
    expect(/data-testid="license-entitlements">(.*?)<\/p>/.exec(saved.html)![1]).toBe(
      '<code>beta</code> <code>pdf-export</code> <code>sync</code> <code>team-admin</code>',
    );
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.extra_entitlements).toEqual(['team-admin', 'beta']);
    expect((await validate(key, { entitlements: ['team-admin'] }, api)).body.code).toBe('valid');
    const cleared = await web.post(`/dashboard/licenses/${key}/entitlements`, { _csrf: csrf, entitlements: '' });
    expect(cleared.status).toBe(200);
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.extra_entitlements).toEqual([]);
  });

  it('refuses bad codes next to the field, as the API does, and writes nothing', async () => {
    const { web, csrf, api } = await owner();
    const bad = await web.post('/dashboard/products', { _csrf: csrf, ...productForm('pdf-export, PDF') });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, 'entitlements')).toContain('is not an entitlement code');
    expect((await api('GET', '/api/v1/products')).body.data).toEqual([]);
    // Line breaks separate codes; other control characters are refused before any form reads them.
    const control = await web.post('/dashboard/products', { _csrf: csrf, ...productForm('a\u0000b') });
    expect(control.status).toBe(400);
    expect(control.html).toContain('entitlements must not contain control characters');
    const twice = await web.post('/dashboard/products', { _csrf: csrf, ...productForm('a a') });
    expect(twice.status).toBe(400);
    expect(fieldError(twice.html, 'entitlements')).toContain('twice');

    const productId = (await api('POST', '/api/v1/products', { name: 'P' })).body.id as string;
    const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'e@example.com' })).body
      .license_key as string;
    const many = Array.from({ length: 101 }, (_, i) => `c${i}`).join(' ');
    for (const typed of ['Nope!', many, 'x x']) {
      const res = await web.post(`/dashboard/licenses/${key}/entitlements`, { _csrf: csrf, entitlements: typed });
      expect(res.status).toBe(400);
      expect(fieldError(res.html, 'entitlements')).toBeTruthy();
    }
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.extra_entitlements).toEqual([]);
    // Without the CSRF token nothing is saved either.
    const forged = await web.post(`/dashboard/licenses/${key}/entitlements`, { entitlements: 'forged' });
    expect(forged.status).toBe(403);
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.extra_entitlements).toEqual([]);
  });
});
