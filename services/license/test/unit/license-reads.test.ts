import { DAY_MS } from '@licensing/proto';
import { transitionLicense } from '../../src/use-cases/change-license';
import { getLicense, listLicenses, ownLicense, readStats, resolveLicenseKey } from '../../src/use-cases/read-licenses';
import { activate } from '../../src/use-cases/activations';
import { refusal } from '../../../../test/support/fakes/common';
import { PRODUCT_ID, licenseSetup } from '../../../../test/support/fakes/license-deps';

const filter = (over = {}) => ({ product_id: '', customer_email: '', status: '', ...over });

describe('reading licences', () => {
  it('finds an own licence by its key in any case, and no other account’s', async () => {
    const { store, issued } = licenseSetup();
    const lic = await issued();
    expect((await ownLicense(store, 'acct_A', lic.key.toLowerCase()))._id).toBe(lic._id);
    expect((await refusal(() => ownLicense(store, 'acct_B', lic.key))).code).toBe('not_found');
  });

  it('resolves a key in any spelling to its account, licence, product and stored status, whatever the account; an unknown one is not found', async () => {
    const { store, deps, issued } = licenseSetup();
    const lic = await issued();
    await transitionLicense(deps, { account_id: 'acct_A', key: lic.key, action: 'suspend' });
    expect(await resolveLicenseKey(store, lic.key.toLowerCase())).toEqual({
      found: true,
      account_id: 'acct_A',
      license_id: lic._id,
      product_id: PRODUCT_ID,
      stored_status: 'suspended',
    });
    const unknown = await resolveLicenseKey(store, '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG');
    expect(unknown.found).toBe(false);
    expect((await refusal(() => resolveLicenseKey(store, 'not!a!key'))).code).toBe('invalid_request');
  });

  it('counts the active machines and says when the licence was last validated', async () => {
    const { counter, deps, issued } = licenseSetup();
    const lic = await issued();
    await activate(deps, { account_id: 'acct_A', key: lic.key, fingerprint: 'fp-1', name: '' });
    counter.lastValidated.set(lic._id, new Date('2026-02-01T00:00:00Z'));
    const got = await getLicense(deps, counter, 'acct_A', lic.key);
    expect(got).toMatchObject({ activations: 1, lastValidated: new Date('2026-02-01T00:00:00Z') });
    expect(got.doc._id).toBe(lic._id);
  });

  it('lists by effective status: a licence past its grace (by the clock) is expired, a suspended one is not', async () => {
    const { deps, issued, clock } = licenseSetup();
    const a = await issued();
    const b = await issued();
    await transitionLicense(deps, { account_id: 'acct_A', key: b.key, action: 'suspend' });
    clock.advance(373 * DAY_MS);
    const expired = await listLicenses(deps, 'acct_A', filter({ status: 'expired' }), undefined);
    expect(expired.items.map((l) => l._id)).toEqual([a._id]);
    expect(expired.now).toEqual(clock.now());
    const suspended = await listLicenses(deps, 'acct_A', filter({ status: 'suspended' }), undefined);
    expect(suspended.items.map((l) => l._id)).toEqual([b._id]);
  });

  it('lists only the caller account’s licences, by product and e-mail in any case', async () => {
    const { deps, issued } = licenseSetup();
    const mine = await issued();
    await issued('acct_B').catch(() => undefined); // acct_B has no such product: nothing is issued
    const { items } = await listLicenses(
      deps,
      'acct_A',
      filter({ product_id: PRODUCT_ID, customer_email: ' BUYER@example.com ' }),
      undefined,
    );
    expect(items.map((l) => l._id)).toEqual([mine._id]);
    expect((await listLicenses(deps, 'acct_B', filter(), undefined)).items).toEqual([]);
  });

  it.each([
    ['a product id of another kind', { product_id: 'acct_x' }, 'product_id'],
    ['an e-mail over 254 characters', { customer_email: 'x'.repeat(255) }, 'customer_email'],
    ['an unknown status', { status: 'lapsed' }, 'status'],
  ])('refuses a filter with %s', async (_what, over, field) => {
    const { deps } = licenseSetup();
    const err = await refusal(() => listLicenses(deps, 'acct_A', filter(over), undefined));
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors.map((f) => f.field)).toEqual([field]);
  });

  it('adds up stats from the last 30 days only', async () => {
    const { store, counter, issued, clock } = licenseSetup();
    await issued();
    const now = clock.now();
    const bucket = (daysAgo: number) => ({
      accountId: 'acct_A',
      hour: new Date(now.getTime() - daysAgo * DAY_MS),
      validations: 1,
      valid: 1,
      byCode: { valid: 1 },
    });
    counter.buckets.push(bucket(1), bucket(29), bucket(31), { ...bucket(1), accountId: 'acct_B' });
    const { total, buckets } = await readStats(store, counter, 'acct_A', now);
    expect(total).toBe(1);
    expect(buckets).toHaveLength(2);
  });
});
