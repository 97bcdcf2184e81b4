import { judge, nextVerdictChange, parseLicenseKey, withPolicyDefaults, type LicenseFacts } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { graceEnd, retiredKeysAfter } from '../../src/domain/reroll';
import type { RetiredKeyDoc } from '../../src/store/retired-keys';
import { rerollLicense, type RerollDeps } from '../../src/use-cases/reroll-license';
import { licenseSetup } from '../../../../test/support/fakes/license-deps';

const HOUR = 3_600_000;
const now = new Date('2026-03-01T12:00:00.000Z');

describe('judging a key a reroll replaced (proto/rules/verdict.ts)', () => {
  const key = parseLicenseKey('7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG');
  const facts = (over: Partial<LicenseFacts> = {}): LicenseFacts => ({
    account_id: 'acct_A',
    product_id: 'prod_A',
    status: 'active',
    expires_at: null,
    policy: withPolicyDefaults({}),
    ...over,
  });
  const request = { accountId: 'acct_A', productId: '', fingerprint: '' };
  const none = { fingerprintActive: false, count: 0 };

  it('answers valid with update_key until its grace ends, trusted offline no longer than that', () => {
    const until = new Date(now.getTime() + 2 * HOUR);
    const v = judge(key, facts({ retired_until: until }), request, none, now);
    expect(v).toMatchObject({ valid: true, code: 'valid', nextAction: 'update_key', visible: true });
    expect(v.cacheUntil.getTime()).toBe(until.getTime());
    expect(v.detail).toContain(until.toISOString());
  });

  it('is not found from the end of its grace on (and at once with a grace of 0)', () => {
    const v = judge(key, facts({ retired_until: now }), request, none, now);
    expect(v).toMatchObject({ valid: false, code: 'not_found', nextAction: 'contact_vendor', visible: false });
    expect(judge(key, facts({ retired_until: new Date(now.getTime() - 1) }), request, none, now).code).toBe(
      'not_found',
    );
  });

  it("keeps the licence's own refusal (and its next action) within the grace", () => {
    const until = new Date(now.getTime() + HOUR);
    expect(judge(key, facts({ status: 'revoked', retired_until: until }), request, none, now)).toMatchObject({
      code: 'revoked',
      nextAction: 'contact_vendor',
    });
    // Another account's: not found, as any key.
    expect(judge(key, facts({ retired_until: until }), { ...request, accountId: 'acct_B' }, none, now).code).toBe(
      'not_found',
    );
  });

  it('an expired licence in its grace days, through a replaced key, says update_key too', () => {
    const v = judge(
      key,
      facts({
        expires_at: new Date(now.getTime() - HOUR),
        policy: withPolicyDefaults({ grace_days: 3 }),
        retired_until: new Date(now.getTime() + HOUR),
      }),
      request,
      none,
      now,
    );
    expect(v).toMatchObject({ valid: true, code: 'expired_in_grace', nextAction: 'update_key' });
  });

  it('the next change of the verdict is the earlier of the expiry and the end of the grace', () => {
    const until = new Date(now.getTime() + HOUR);
    expect(nextVerdictChange(facts({ retired_until: until }), now)).toBe(until.getTime());
    expect(nextVerdictChange(facts({ retired_until: until, expires_at: new Date(now.getTime() + 60_000) }), now)).toBe(
      now.getTime() + 60_000,
    );
    expect(nextVerdictChange(facts({ retired_until: new Date(now.getTime() - 1) }), now)).toBe(Infinity);
  });
});

describe('reroll rules (services/license/src/domain/reroll.ts)', () => {
  it.each([0, 1, 720])('takes a grace of %i hours', (h) => {
    expect(graceEnd(h, now).getTime()).toBe(now.getTime() + h * HOUR);
  });

  it.each([-1, 721, 1.5, '2', null, undefined])('refuses a grace of %p, naming grace_hours', (h) => {
    try {
      graceEnd(h, now);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).fieldErrors[0].field).toBe('grace_hours');
    }
  });

  it('keeps the replaced keys still in grace, drops the ones past it, and lists a key once', () => {
    const later = new Date(now.getTime() + HOUR);
    const kept = retiredKeysAfter(
      [
        { key: 'A', until: new Date(now.getTime() - 1) },
        { key: 'B', until: later },
        { key: 'C', until: later },
      ],
      'C',
      now,
      now,
    );
    expect(kept).toEqual([
      { key: 'B', until: later },
      { key: 'C', until: now },
    ]);
  });
});

/** The retired_keys collection in memory: a unique insert is the claim. */
class FakeRetiredKeys {
  readonly docs = new Map<string, RetiredKeyDoc>();
  async claim(doc: RetiredKeyDoc) {
    if (this.docs.has(doc._id)) return false;
    this.docs.set(doc._id, { ...doc });
    return true;
  }
  async find(key: string) {
    return this.docs.get(key) ?? null;
  }
  async extend(key: string, until: Date) {
    const d = this.docs.get(key);
    if (d) d.until = until;
  }
  async release(key: string, newKey: string) {
    if (this.docs.get(key)?.new_key === newKey) this.docs.delete(key);
  }
}

describe('rerolling a licence (use-cases/reroll-license.ts)', () => {
  const setup = () => {
    const s = licenseSetup();
    const retired = new FakeRetiredKeys();
    const deps: RerollDeps = { ...s.deps, retired };
    return { ...s, retired, deps };
  };

  it('gives a new key, keeps the rest, files the old key with its grace and publishes license.rerolled', async () => {
    const { deps, store, retired, issued, clock } = setup();
    const lic = await issued();
    const { doc } = await rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 24 });
    expect(doc.key).not.toBe(lic.key);
    expect(doc._id).toBe(lic._id);
    expect(doc.expires_at).toEqual(lic.expires_at);
    const until = new Date(clock.now().getTime() + 24 * HOUR);
    expect(doc.retired_keys).toEqual([{ key: lic.key, until }]);
    expect(retired.docs.get(lic.key)).toMatchObject({ license_id: lic._id, new_key: doc.key, until });
    expect(store.events.map((e) => e.type)).toEqual(['license.rerolled']);
    expect(store.events[0].data).toMatchObject({
      previous_key: lic.key,
      previous_key_valid_until: until.toISOString(),
      license: { key: doc.key, previous_keys: [{ key: lic.key, valid_until: until.toISOString() }] },
    });
  });

  it("send_email asks for the new key's mail on license.rerolled, in the same write; asked again, asks nothing", async () => {
    const { deps, store, issued } = setup();
    const lic = await issued();
    const { doc } = await rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 0, send_email: true });
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({
      type: 'license.rerolled',
      send_email: true,
      data: { license: { key: doc.key } },
    });
    await rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 0, send_email: true });
    expect(store.events).toHaveLength(1);
    const other = await issued();
    await rerollLicense(deps, { account_id: 'acct_A', key: other.key, grace_hours: 0 });
    // (issued() clears the recorded events)
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({ type: 'license.rerolled', data: { license: { id: other._id } } });
    expect(store.events[0]).not.toHaveProperty('send_email');
  });

  it('send_email for a licence without customer_email is 409, and rerolls nothing', async () => {
    const { deps, store, issued } = setup();
    const lic = await issued();
    store.licenses.get(lic._id)!.customer_email = '';
    await expect(
      rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 0, send_email: true }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(store.events).toHaveLength(0);
    expect(store.licenses.get(lic._id)?.key).toBe(lic.key);
  });

  it('asked again with the old key, answers the licence with its new key and rerolls nothing', async () => {
    const { deps, store, issued } = setup();
    const lic = await issued();
    const first = await rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 0 });
    const again = await rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 5 });
    expect(again.doc.key).toBe(first.doc.key);
    expect(store.events).toHaveLength(1);
    // Another account asking with that key: not found.
    await expect(rerollLicense(deps, { account_id: 'acct_B', key: lic.key, grace_hours: 0 })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('finishes a reroll that stopped between its claim and the licence write, with the same new key', async () => {
    const { deps, store, retired, issued, clock } = setup();
    const lic = await issued();
    const createdAt = new Date(clock.now().getTime() - 60_000);
    await retired.claim({
      _id: lic.key,
      account_id: 'acct_A',
      license_id: lic._id,
      new_key: '0000A-0000B-0000C-0000D-0000E-0000F',
      until: createdAt,
      created_at: createdAt,
    });
    const { doc } = await rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 2 });
    expect(doc.key).toBe('0000A-0000B-0000C-0000D-0000E-0000F');
    expect(retired.docs.get(lic.key)?.until).toEqual(new Date(clock.now().getTime() + 2 * HOUR));
    expect(store.licenses.get(lic._id)?.key).toBe(doc.key);
  });

  it('a reroll of the same key still under way elsewhere is 409, and changes nothing', async () => {
    const { deps, store, retired, issued, clock } = setup();
    const lic = await issued();
    await retired.claim({
      _id: lic.key,
      account_id: 'acct_A',
      license_id: lic._id,
      new_key: '0000A-0000B-0000C-0000D-0000E-0000F',
      until: clock.now(),
      created_at: clock.now(),
    });
    await expect(rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 2 })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(store.licenses.get(lic._id)?.key).toBe(lic.key);
  });

  it('refuses a revoked licence (409) and a grace out of range (naming grace_hours), changing nothing', async () => {
    const { deps, store, retired, issued } = setup();
    const lic = await issued();
    await expect(rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 721 })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'grace_hours' }],
    });
    store.licenses.get(lic._id)!.status = 'revoked';
    await expect(rerollLicense(deps, { account_id: 'acct_A', key: lic.key, grace_hours: 1 })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(store.licenses.get(lic._id)?.key).toBe(lic.key);
    expect(retired.docs.size).toBe(0);
    expect(store.events).toHaveLength(0);
  });
});
