import { DAY_MS } from '@licensing/proto';
import { transitionLicense, updateLicense } from '../../src/use-cases/change-license';
import { refusal } from '../../../../test/support/fakes/common';
import { licenseSetup, policy } from '../../../../test/support/fakes/license-deps';

const update = (key: string, over: Record<string, unknown> = {}) => ({
  account_id: 'acct_A',
  key,
  customer_email: undefined as string | undefined,
  metadata: {} as Record<string, string>,
  ...over,
});

describe('updating a licence', () => {
  it('changes the customer e-mail (and its lower-case form) with license.updated, then hands it to the outbox', async () => {
    const { store, outbox, deps, issued } = licenseSetup();
    const lic = await issued();
    const { doc } = await updateLicense(deps, update(lic.key, { customer_email: 'New@Example.com' }));
    expect(doc).toMatchObject({ customer_email: 'New@Example.com', customer_email_lc: 'new@example.com' });
    expect(store.licenses.get(lic._id)?.customer_email).toBe('New@Example.com');
    expect(store.events.map((e) => e.type)).toEqual(['license.updated']);
    expect(store.events[0].data).toMatchObject({ license: { customer_email: 'New@Example.com' } });
    expect(outbox.flushed).toEqual([{ model: 'License', id: lic._id }]);
  });

  it('merges metadata, an empty value removing its entry', async () => {
    const { store, deps, issued } = licenseSetup();
    const lic = await issued();
    await updateLicense(deps, update(lic.key, { metadata: { seat: '1', team: 'red' } }));
    const { doc } = await updateLicense(deps, update(lic.key, { metadata: { seat: '', plan: 'gold' } }));
    expect(doc.metadata).toEqual({ team: 'red', plan: 'gold' });
    expect(store.licenses.get(lic._id)?.metadata).toEqual({ team: 'red', plan: 'gold' });
  });

  it("replaces the licence's own entitlements whole, [] clearing them, with the effective set in license.updated", async () => {
    const { store, deps, issued } = licenseSetup({ policy: policy({ entitlements: ['sync'] }) });
    const lic = await issued();
    await updateLicense(deps, update(lic.key, { set_entitlements: true, entitlements: ['a', 'b'] }));
    const { doc } = await updateLicense(deps, update(lic.key, { set_entitlements: true, entitlements: ['c'] }));
    expect(doc.extra_entitlements).toEqual(['c']);
    expect(store.licenses.get(lic._id)?.extra_entitlements).toEqual(['c']);
    expect(store.events.at(-1)?.data).toMatchObject({ license: { entitlements: ['c', 'sync'] } });
    // Without set_entitlements they stay as they are.
    await updateLicense(deps, update(lic.key, { metadata: { a: 'b' } }));
    expect(store.licenses.get(lic._id)?.extra_entitlements).toEqual(['c']);
    await updateLicense(deps, update(lic.key, { set_entitlements: true, entitlements: [] }));
    expect(store.licenses.get(lic._id)?.extra_entitlements).toEqual([]);
  });

  it('finds the licence by a key typed in lower case', async () => {
    const { deps, issued } = licenseSetup();
    const lic = await issued();
    const { doc } = await updateLicense(deps, update(lic.key.toLowerCase(), { metadata: { a: 'b' } }));
    expect(doc._id).toBe(lic._id);
  });

  it.each([
    ['nothing to change', {}, undefined],
    ['a malformed e-mail', { customer_email: 'nobody' }, 'customer_email'],
    ['a metadata key with a space', { metadata: { 'a b': 'x' } }, 'metadata.a b'],
    ['a metadata value over 500 characters', { metadata: { note: 'x'.repeat(501) } }, 'metadata.note'],
    // A dotted key is a path in the stored sub-document (FerretDB refuses the write); "$" starts an operator.
    ['a metadata key with a dot', { metadata: { 'a.b': 'x' } }, 'metadata.a.b'],
    ['a metadata key that starts with $', { metadata: { $set: 'x' } }, 'metadata.$set'],
    ['a metadata value with a NUL', { metadata: { note: 'a\u0000b' } }, 'metadata.note'],
    ['a metadata value with an unpaired surrogate', { metadata: { note: '\ud800' } }, 'metadata.note'],
    ['a malformed entitlement', { set_entitlements: true, entitlements: ['Bad'] }, 'entitlements[0]'],
    ['a duplicated entitlement', { set_entitlements: true, entitlements: ['a', 'a'] }, 'entitlements'],
    [
      '101 entitlements',
      { set_entitlements: true, entitlements: Array.from({ length: 101 }, (_, i) => `c${i}`) },
      'entitlements',
    ],
    [
      'an e-mail with a bad entitlement (the e-mail is not written either)',
      { customer_email: 'new@example.com', set_entitlements: true, entitlements: ['-'] },
      'entitlements[0]',
    ],
  ])('refuses %s, writing nothing', async (_what, over, field) => {
    const { store, outbox, deps, issued } = licenseSetup();
    const lic = await issued();
    const err = await refusal(() => updateLicense(deps, update(lic.key, over)));
    expect(err.code).toBe('invalid_request');
    if (field) expect(err.fieldErrors.map((f) => f.field)).toEqual([field]);
    expect(store.replaces).toEqual([]);
    expect(store.events).toEqual([]);
    expect(outbox.flushed).toEqual([]);
  });

  it.each([
    ["another account's licence", 'acct_B', null],
    ['an unknown key', 'acct_A', 'ABCDE-FGHJK-MNPQR-STUVW-XYZ23-45678-9ABCD'],
    ['a malformed key', 'acct_A', 'not-a-key'],
  ])('answers %s as not found', async (_what, accountId, key) => {
    const { store, deps, issued } = licenseSetup();
    const lic = await issued();
    const err = await refusal(() =>
      updateLicense(deps, update(key ?? lic.key, { account_id: accountId, metadata: { a: 'b' } })),
    );
    expect(err.code).toBe('not_found');
    expect(store.replaces).toEqual([]);
  });

  it('reads again and retries when another writer changed the licence in between', async () => {
    const { store, outbox, deps, issued } = licenseSetup();
    const lic = await issued();
    store.lostRaces = 1;
    await updateLicense(deps, update(lic.key, { metadata: { a: 'b' } }));
    expect(store.replaces).toHaveLength(2);
    expect(store.events).toHaveLength(1);
    expect(outbox.flushed).toEqual([{ model: 'License', id: lic._id }]);
  });

  it('gives up with a conflict after five lost races, publishing nothing', async () => {
    const { store, outbox, deps, issued } = licenseSetup();
    const lic = await issued();
    store.lostRaces = 5;
    const err = await refusal(() => updateLicense(deps, update(lic.key, { metadata: { a: 'b' } })));
    expect(err.code).toBe('conflict');
    expect(err.message).toMatch(/being changed by another request/);
    expect(store.replaces).toHaveLength(5);
    expect(store.events).toEqual([]);
    expect(outbox.flushed).toEqual([]);
  });
});

const act = (key: string, action: string, accountId = 'acct_A') => ({ account_id: accountId, key, action });

describe('moving a licence through its lifecycle', () => {
  it('suspends an active licence with license.suspended', async () => {
    const { store, outbox, deps, issued } = licenseSetup();
    const lic = await issued();
    const { doc } = await transitionLicense(deps, act(lic.key, 'suspend'));
    expect(doc.status).toBe('suspended');
    expect(store.licenses.get(lic._id)?.status).toBe('suspended');
    expect(store.events.map((e) => e.type)).toEqual(['license.suspended']);
    expect(outbox.flushed).toEqual([{ model: 'License', id: lic._id }]);
  });

  it('reinstates a suspended licence, and revokes it for good', async () => {
    const { store, deps, issued } = licenseSetup();
    const lic = await issued();
    await transitionLicense(deps, act(lic.key, 'suspend'));
    await transitionLicense(deps, act(lic.key, 'reinstate'));
    await transitionLicense(deps, act(lic.key, 'revoke'));
    expect(store.events.map((e) => e.type)).toEqual(['license.suspended', 'license.reinstated', 'license.revoked']);
    const err = await refusal(() => transitionLicense(deps, act(lic.key, 'reinstate')));
    expect(err).toMatchObject({ code: 'conflict', message: expect.stringMatching(/revocation is final/) });
  });

  it.each([
    ['suspending a suspended licence', ['suspend'], 'suspend', /already suspended/],
    ['reinstating an active licence', [], 'reinstate', /not suspended/],
    ['revoking a revoked licence', ['revoke'], 'revoke', /already revoked/],
    ['renewing a revoked licence', ['revoke'], 'renew', /cannot be renewed/],
  ])('refuses %s as a conflict, writing nothing more', async (_what, before, action, message) => {
    const { store, outbox, deps, issued } = licenseSetup();
    const lic = await issued();
    for (const b of before) await transitionLicense(deps, act(lic.key, b));
    const [events, flushed] = [store.events.length, outbox.flushed.length];
    const err = await refusal(() => transitionLicense(deps, act(lic.key, action)));
    expect(err.code).toBe('conflict');
    expect(err.message).toMatch(message);
    expect(store.events).toHaveLength(events);
    expect(outbox.flushed).toHaveLength(flushed);
  });

  it('refuses an unknown action as invalid', async () => {
    const { store, deps, issued } = licenseSetup();
    const lic = await issued();
    const err = await refusal(() => transitionLicense(deps, act(lic.key, 'delete')));
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['action']);
    expect(store.replaces).toEqual([]);
  });

  it("answers another account's licence as not found", async () => {
    const { deps, issued } = licenseSetup();
    const lic = await issued();
    expect((await refusal(() => transitionLicense(deps, act(lic.key, 'revoke', 'acct_B')))).code).toBe('not_found');
  });

  it("renews from the old expiry with the product's current policy, asking the product service", async () => {
    const { store, products, product, deps, issued, clock } = licenseSetup();
    const lic = await issued();
    products.products.set(product.id, { ...product, policy: policy({ duration_days: 30, grace_days: 3 }) });
    const { doc } = await transitionLicense(deps, act(lic.key, 'renew'));
    const expires = new Date(clock.now().getTime() + (365 + 30) * DAY_MS);
    expect(doc).toMatchObject({
      status: 'active',
      expires_at: expires,
      grace_ends_at: new Date(expires.getTime() + 3 * DAY_MS),
      expired_notified: false,
      expiry_bucket: new Date(expires.getTime() + 3 * DAY_MS).toISOString().slice(0, 13),
    });
    expect(doc.policy).toMatchObject({ duration_days: 30, grace_days: 3 });
    // The policy, then the entitlements it is answered with (a product cache hit in the service).
    expect(products.calls.map((c) => c.req)).toEqual([
      { account_id: 'acct_A', id: product.id },
      { account_id: 'acct_A', id: product.id },
    ]);
    expect(store.events.map((e) => e.type)).toEqual(['license.renewed']);
  });

  it('renews an expired licence from now, not from its past expiry', async () => {
    const { deps, issued, clock } = licenseSetup();
    const lic = await issued();
    clock.advance(400 * DAY_MS);
    const { doc } = await transitionLicense(deps, act(lic.key, 'renew'));
    expect(doc.expires_at).toEqual(new Date(clock.now().getTime() + 365 * DAY_MS));
  });

  it('takes no policy for a suspension: the product is read only for the entitlements it answers with', async () => {
    const { products, product, deps, issued } = licenseSetup();
    const lic = await issued();
    products.products.set(product.id, { ...product, policy: policy({ duration_days: 30, entitlements: ['new'] }) });
    const { doc } = await transitionLicense(deps, act(lic.key, 'suspend'));
    expect(doc.policy).toMatchObject({ duration_days: 365, entitlements: ['new'] });
    expect(products.calls).toHaveLength(1);
  });
});
