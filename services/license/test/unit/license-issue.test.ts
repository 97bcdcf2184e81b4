import { DAY_MS } from '@licensing/proto';
import { checkNewLicense, issueLicense } from '../../src/use-cases/issue-license';
import { createLicenseScope } from '../../src/handlers/license-handlers';
import { refusal } from '../../../../test/support/fakes/common';
import { PRODUCT_ID, licenseSetup, policy } from '../../../../test/support/fakes/license-deps';

const input = { product_id: PRODUCT_ID, customer_email: 'Buyer@Example.com' };

describe('issuing a licence', () => {
  it('stores an active licence with the product policy, its expiry, grace and expiry bucket from the clock', async () => {
    const { store, clock, deps } = licenseSetup();
    const { doc, now } = await issueLicense(deps, 'acct_A', input);
    expect(now).toEqual(clock.now());
    expect(doc).toMatchObject({
      account_id: 'acct_A',
      product_id: PRODUCT_ID,
      customer_email: 'Buyer@Example.com',
      customer_email_lc: 'buyer@example.com',
      status: 'active',
      expires_at: new Date(clock.now().getTime() + 365 * DAY_MS),
      grace_ends_at: new Date(clock.now().getTime() + 372 * DAY_MS),
      expiry_bucket: new Date(clock.now().getTime() + 372 * DAY_MS).toISOString().slice(0, 13),
      expired_notified: false,
      metadata: {},
      created_at: clock.now(),
    });
    expect(doc.policy).toEqual({
      duration_days: 365,
      max_activations: 2,
      grace_days: 7,
      require_activation: false,
      validate_keys_see_email: false,
      refund_action: 'revoke',
      lease_seconds: null,
      customer_deactivations_per_30_days: 3,
      entitlements: [],
      payment_grace_days: 7,
      max_file_ttl_days: 30,
      expiration_strategy: 'restrict',
    });
    expect(doc._id).toMatch(/^lic_/);
    expect(store.licenses.get(doc._id)).toEqual(doc);
  });

  it('records license.created in the same write and hands the licence to the outbox', async () => {
    const { store, outbox, deps } = licenseSetup();
    const { doc } = await issueLicense(deps, 'acct_A', input);
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({
      type: 'license.created',
      account_id: 'acct_A',
      data: { license: { id: doc._id, key: doc.key, status: 'active' } },
    });
    expect(outbox.flushed).toEqual([{ model: 'License', id: doc._id }]);
    // No mail asked: the envelope says nothing of it.
    expect(store.events[0]).not.toHaveProperty('send_email');
  });

  it('asks for the licence mail on license.created itself (same write) when send_email', async () => {
    const { store, deps } = licenseSetup();
    await issueLicense(deps, 'acct_A', checkNewLicense({ ...input, send_email: true }));
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({ type: 'license.created', send_email: true });
    // Internal to the envelope: the event's data (a webhook's body) does not carry it.
    expect(store.events[0].data).not.toHaveProperty('send_email');
  });

  it('asks the product service for the product in the caller account', async () => {
    const { products, deps } = licenseSetup();
    await issueLicense(deps, 'acct_A', input);
    expect(products.calls.map((c) => c.req)).toEqual([{ account_id: 'acct_A', id: PRODUCT_ID }]);
  });

  it('gives a perpetual product a licence that never expires and is never filed for the sweeper', async () => {
    const { deps } = licenseSetup({ policy: policy({ duration_days: undefined, grace_days: 0 }) });
    const { doc } = await issueLicense(deps, 'acct_A', input);
    expect(doc.expires_at).toBeNull();
    expect(doc.grace_ends_at).toBeNull();
    expect(doc.expiry_bucket).toBeNull();
  });

  it("refuses another account's product as not found, storing and publishing nothing", async () => {
    const { store, outbox, deps } = licenseSetup();
    const err = await refusal(() => issueLicense(deps, 'acct_B', input));
    expect(err.code).toBe('not_found');
    expect(store.licenses.size).toBe(0);
    expect(outbox.flushed).toEqual([]);
  });

  it('draws a new key when the first collides, and stores one licence', async () => {
    const { store, outbox, deps } = licenseSetup();
    store.duplicateInserts = 1;
    const { doc } = await issueLicense(deps, 'acct_A', input);
    expect([...store.licenses.keys()]).toEqual([doc._id]);
    expect(store.events).toHaveLength(1);
    expect(outbox.flushed).toEqual([{ model: 'License', id: doc._id }]);
  });

  it('gives up after three colliding keys rather than hand out a duplicate', async () => {
    const { store, outbox, deps } = licenseSetup();
    store.duplicateInserts = 3;
    const err = await refusal(() => issueLicense(deps, 'acct_A', input));
    expect((err as unknown as { code: number }).code).toBe(11000);
    expect(store.licenses.size).toBe(0);
    expect(outbox.flushed).toEqual([]);
  });

  it('passes on a store failure other than a duplicate key at once, without retrying', async () => {
    const { store, deps } = licenseSetup();
    let calls = 0;
    store.insert = async () => {
      calls++;
      throw new Error('store down');
    };
    await expect(issueLicense(deps, 'acct_A', input)).rejects.toThrow('store down');
    expect(calls).toBe(1);
  });
});

describe('issuing under an Idempotency-Key (the id all runs of the key share)', () => {
  const licenseId = 'lic_01HZZZZZZZZZZZZZZZZZZZZZZZ';

  it('stores the licence under that id', async () => {
    const { store, deps } = licenseSetup();
    const { doc } = await issueLicense(deps, 'acct_A', input, { licenseId, resumed: false });
    expect(doc._id).toBe(licenseId);
    expect([...store.licenses.keys()]).toEqual([licenseId]);
  });

  it('a run resumed after one that got as far as the insert answers with that licence: no second one, no policy taken', async () => {
    const { store, outbox, products, deps } = licenseSetup();
    const first = await issueLicense(deps, 'acct_A', input, { licenseId, resumed: false });
    products.calls.length = 0;
    outbox.flushed.length = 0;
    const again = await issueLicense(deps, 'acct_A', input, { licenseId, resumed: true });
    expect(again.doc).toEqual(first.doc);
    expect(store.licenses.size).toBe(1);
    expect(store.events).toHaveLength(1);
    // Read once, for the entitlements it is answered with (live, never stored).
    expect(products.calls).toHaveLength(1);
    // Its events go out now if that run stopped before handing them over.
    expect(outbox.flushed).toEqual([{ model: 'License', id: licenseId }]);
  });

  it('a run that finds the id taken (another run of the same request got there first) answers with that licence', async () => {
    const { store, deps } = licenseSetup();
    const first = await issueLicense(deps, 'acct_A', input, { licenseId, resumed: false });
    const racing = await issueLicense(deps, 'acct_A', input, { licenseId, resumed: false });
    expect(racing.doc).toEqual(first.doc);
    expect(store.licenses.size).toBe(1);
  });

  it('a resumed run that finds nothing issues the licence under the id', async () => {
    const { store, deps } = licenseSetup();
    const { doc } = await issueLicense(deps, 'acct_A', input, { licenseId, resumed: true });
    expect(doc._id).toBe(licenseId);
    expect(store.licenses.size).toBe(1);
  });
});

describe('where createLicense keeps its Idempotency-Keys', () => {
  it('REST clients (through the gateway) in the namespace they always had; each internal caller in its own', () => {
    expect(createLicenseScope('acct_A', 'gateway')).toBe('acct_A:create_license');
    expect(createLicenseScope('acct_A', 'checkout')).toBe('acct_A:checkout:create_license');
    expect(createLicenseScope('acct_A', 'checkout')).not.toBe(createLicenseScope('acct_A', 'gateway'));
  });
});

describe('checking a new licence request', () => {
  it('keeps the product id and the checked e-mail (what an Idempotency-Key is compared by)', () => {
    expect(checkNewLicense({ product_id: PRODUCT_ID, customer_email: ' buyer@example.com ' })).toEqual({
      product_id: PRODUCT_ID,
      customer_email: 'buyer@example.com',
    });
    // send_email counts only when asked, so a request without it compares as it always did.
    expect(
      checkNewLicense({ product_id: PRODUCT_ID, customer_email: 'buyer@example.com', send_email: false }),
    ).not.toHaveProperty('send_email');
    expect(
      checkNewLicense({ product_id: PRODUCT_ID, customer_email: 'buyer@example.com', send_email: true }),
    ).toMatchObject({ send_email: true });
  });

  it.each([
    ['a product id of another kind', { product_id: 'acct_01HZZZZZZZZZZZZZZZZZZZZZZZ' }, 'product_id'],
    ['an empty product id', { product_id: '' }, 'product_id'],
    ['an e-mail without @', { customer_email: 'buyer.example.com' }, 'customer_email'],
    ['an empty e-mail', { customer_email: '' }, 'customer_email'],
  ])('refuses %s', (_what, over, field) => {
    try {
      checkNewLicense({ product_id: PRODUCT_ID, customer_email: 'buyer@example.com', ...over });
      throw new Error('accepted');
    } catch (err) {
      expect((err as { code: string }).code).toBe('invalid_request');
      expect((err as { fieldErrors: { field: string }[] }).fieldErrors.map((f) => f.field)).toEqual([field]);
    }
  });
});
