import { type AppError, newId } from '@licensing/runtime';
import { ALPHABET, CreateLicenseRequest, ValidateLicenseRequest } from '@licensing/proto';
import type { EventLog } from '../../../../test/support/events';
import { type RunningLicense, useLicenseService } from './running-license';

// Issuing, listing and validating licences as the licence service does it, called over gRPC as the
// gateway calls it (real FerretDB and NATS, its product service faked): a licence issued under its
// product's default policy with license.created in the documented envelope, lists newest first by
// product with cursors, refusals that write nothing, Idempotency-Key kept per account (concurrent
// requests included), and validation answers: valid with the licence, product_mismatch, keys as people
// type them, a mistyped key caught by its checksum, another account's key not found. The REST shapes of
// the same cases: gateway/test/component/license-issue-routes.test.ts.

const KEY_SHAPE = /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){5}$/;
let svc: RunningLicense;
let events: EventLog;
const accountId = newId('acct');
let productId: string;

useLicenseService(async (started, log) => {
  svc = started;
  events = log;
  productId = svc.product(accountId, { max_activations: undefined }).id;
});

/** The same key with one character replaced by another valid one. */
function mistype(key: string): string {
  const i = 7; // inside the second group
  const replacement = ALPHABET[(ALPHABET.indexOf(key[i]) + 1) % 32];
  return key.slice(0, i) + replacement + key.slice(i + 1);
}

const create = (fields: Partial<CreateLicenseRequest>, account = accountId) =>
  svc.api.createLicense(CreateLicenseRequest.fromPartial({ account_id: account, ...fields }));
const newLicense = (email = 'buyer@example.com') => svc.issue(accountId, productId, email);
const validate = (key: string, extra: Partial<ValidateLicenseRequest> = {}, account = accountId) =>
  svc.api.validateLicense(
    ValidateLicenseRequest.fromPartial({ account_id: account, key, key_scope: 'full', ...extra }),
  );
const list = (account: string, extra: { product_id?: string; limit?: number; starting_after?: string } = {}) =>
  svc.api.listLicenses({
    account_id: account,
    page: { limit: extra.limit ?? 100, starting_after: extra.starting_after ?? '' },
    product_id: extra.product_id ?? '',
    customer_email: '',
    status: '',
  });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );

describe('issuing licences', () => {
  it('creates a licence: 201 {success, license_key, license}', async () => {
    const created = await create({ product_id: productId, customer_email: 'ada@example.com' });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^lic_/),
      key: expect.stringMatching(KEY_SHAPE),
      account_id: accountId,
      product_id: productId,
      customer_email: 'ada@example.com',
      status: 'active',
      expires_at: '',
      policy: {
        grace_days: 0,
        require_activation: false,
        validate_keys_see_email: false,
        refund_action: 'revoke',
        entitlements: [],
        customer_deactivations_per_30_days: 3,
        payment_grace_days: 7,
        max_file_ttl_days: 30,
        expiration_strategy: 'restrict',
      },
      activations: 0,
      metadata: {},
      entitlements: [],
      extra_entitlements: [],
      created_at: expect.any(String),
      last_validated_at: '',
    });
    expect(created.policy?.duration_days).toBeUndefined();
    expect(created.policy?.max_activations).toBeUndefined();
    expect(created.policy?.lease_seconds).toBeUndefined();
    expect(created.subscription).toBeUndefined();
    expect(await svc.api.getLicense({ account_id: accountId, key: created.key })).toEqual(created);
  });

  it('publishes license.created on NATS with the documented envelope', async () => {
    const key = await newLicense('events@example.com');
    const event = await events.waitFor(
      (e) => e.type === 'license.created' && (e.data as { license: { key: string } }).license.key === key,
    );
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      type: 'license.created',
      account_id: accountId,
      created_at: expect.any(String),
    });
    expect(event.data).toEqual({
      license: {
        id: expect.any(String),
        key,
        product_id: productId,
        customer_email: 'events@example.com',
        status: 'active',
        expires_at: null,
        created_at: expect.any(String),
        entitlements: [],
      },
    });
    expect(events.subjectOf(event.id)).toBe(`${svc.t.subjectPrefix}.license.created`);
  });

  it('lists licences newest first, filtered by product, with pagination', async () => {
    const own = newId('acct');
    const p1 = svc.product(own).id;
    const p2 = svc.product(own).id;
    const k1 = await svc.issue(own, p1, 'a@example.com');
    const k2 = await svc.issue(own, p2, 'b@example.com');
    const k3 = await svc.issue(own, p1, 'c@example.com');
    expect((await list(own)).data.map((l) => l.key)).toEqual([k3, k2, k1]);
    const filtered = await list(own, { product_id: p1, limit: 1 });
    expect(filtered.data.map((l) => l.key)).toEqual([k3]);
    expect(filtered.page).toMatchObject({ has_more: true, next_cursor: expect.stringMatching(/^lic_/) });
    const next = await list(own, { product_id: p1, limit: 1, starting_after: filtered.page!.next_cursor });
    expect(next.data.map((l) => l.key)).toEqual([k1]);
    expect(next.page).toMatchObject({ has_more: false, next_cursor: '' });
    expect((await refusal(list(own, { product_id: 'bad' }))).code).toBe('invalid_request');
  });

  it('refuses bad input with problem+json and writes nothing', async () => {
    const own = newId('acct');
    const product = svc.product(own).id;
    const cases: [Partial<CreateLicenseRequest>, string, string | undefined][] = [
      [{ customer_email: 'a@example.com' }, 'invalid_request', 'product_id'],
      [{ product_id: product }, 'invalid_request', 'customer_email'],
      [{ product_id: product, customer_email: 'not-an-email' }, 'invalid_request', 'customer_email'],
      [{ product_id: product, customer_email: 'a@b' }, 'invalid_request', 'customer_email'],
      [{ product_id: product, customer_email: 'a b@example.com' }, 'invalid_request', 'customer_email'],
      [{ product_id: 'prod_123', customer_email: 'a@example.com' }, 'invalid_request', 'product_id'],
      [{ product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N', customer_email: 'a@example.com' }, 'not_found', undefined],
      [{ product_id: productId, customer_email: 'a@example.com' }, 'not_found', undefined], // another account's product
    ];
    for (const [fields, code, field] of cases) {
      const refused = await refusal(create(fields, own));
      expect({ fields, code: refused.code }).toEqual({ fields, code });
      if (field) expect(refused.fieldErrors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    expect((await list(own)).data).toEqual([]);
  });

  it('the same Idempotency-Key twice yields one licence; with another body, 422', async () => {
    const own = newId('acct');
    const product = svc.product(own).id;
    const body = { product_id: product, customer_email: 'idem@example.com', idempotency_key: 'order-4711' };
    const first = await create(body, own);
    const again = await create(body, own);
    expect(again).toEqual(first);
    const other = await refusal(create({ ...body, customer_email: 'other@example.com' }, own));
    expect(other.code).toBe('idempotency_key_reused');
    expect((await list(own)).data).toHaveLength(1);
    // Keys are per account: another account may use the same key for its own request.
    const second = newId('acct');
    const theirs = await create({ ...body, product_id: svc.product(second).id }, second);
    expect(theirs.key).not.toBe(first.key);
  });

  it('concurrent requests with one Idempotency-Key create one licence (the others get it or 409)', async () => {
    const own = newId('acct');
    const body = { product_id: svc.product(own).id, customer_email: 'race@example.com', idempotency_key: 'race-1' };
    const results = await Promise.all(Array.from({ length: 8 }, () => create(body, own).catch((err: AppError) => err)));
    for (const r of results) if ('code' in r && !('key' in r)) expect(r.code).toBe('conflict');
    const keys = new Set(results.filter((r) => 'key' in r).map((r) => (r as { key: string }).key));
    expect(keys.size).toBe(1);
    expect((await list(own)).data).toHaveLength(1);
  });
});

describe('validating licences', () => {
  it('GET /licenses/validate answers valid with product and customer', async () => {
    const key = await newLicense('val@example.com');
    const res = await validate(key);
    expect(res).toMatchObject({
      valid: true,
      code: 'valid',
      detail: expect.any(String),
      next_action: 'none',
      license: { product_id: productId, customer_email: 'val@example.com', status: 'active', expires_at: '' },
    });
    // A perpetual valid licence may be trusted offline for a day.
    expect(Date.parse(res.cache_until) - Date.now()).toBeGreaterThan(23 * 3600_000);
  });

  it('POST /keys/validate answers valid with the licence, and product_mismatch for another product', async () => {
    const key = await newLicense();
    expect(await validate(key, { product_id: productId })).toMatchObject({
      valid: true,
      code: 'valid',
      license: { key, product_id: productId },
    });
    const otherProduct = svc.product(accountId).id;
    expect(await validate(key, { product_id: otherProduct })).toMatchObject({ valid: false, code: 'product_mismatch' });
    expect(await validate(key)).toMatchObject({ valid: true, code: 'valid' });
  });

  it('ignores case, surrounding spaces, hyphens and Crockford aliases', async () => {
    const key = await newLicense();
    const variants = [
      key.toLowerCase(),
      `  ${key}  `,
      key.replace(/-/g, ''),
      key.replace(/0/g, 'O').replace(/1/g, 'l'),
    ];
    for (const v of variants) expect({ v, code: (await validate(v)).code }).toEqual({ v, code: 'valid' });
  });

  it('rejects a key with one character changed by its checksum', async () => {
    const key = await newLicense();
    const res = await validate(mistype(key));
    expect(res).toMatchObject({
      valid: false,
      code: 'not_found',
      detail: expect.stringContaining('typo'),
      next_action: 'contact_vendor',
      cache_until: expect.any(String),
    });
    expect(res.license).toBeUndefined();
  });

  it('answers not_found for unknown keys and for another account’s key', async () => {
    const key = await newLicense();
    const other = newId('acct');
    const res = await validate(key, {}, other);
    expect(res).toMatchObject({ valid: false, code: 'not_found', next_action: 'contact_vendor' });
    expect(res.license).toBeUndefined();
    expect((await refusal(svc.api.getLicense({ account_id: other, key }))).code).toBe('not_found');
    expect(await validate('NOT-A-KEY')).toMatchObject({ valid: false, code: 'not_found' });
  });
});
