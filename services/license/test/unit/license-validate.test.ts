import type { RecordValidationsRequest } from '@licensing/proto';
import { LicenseCache, MAX_CACHED_FINGERPRINTS } from '../../src/caches/license-cache';
import type { RecentGroup } from '../../src/store/stats';
import { activate } from '../../src/use-cases/activations';
import { transitionLicense } from '../../src/use-cases/change-license';
import { recentValidations, recordGatewayValidations, validateLicense } from '../../src/use-cases/validate-license';
import { FakeBus } from '../../../../test/support/fakes/common';
import { licenseSetup, policy } from '../../../../test/support/fakes/license-deps';

// The validation use case over in-memory stores: the verdict, the activation facts it reads, and what it counts.

class RecordingCounter {
  readonly records: { accountId: string; code: string; valid: boolean }[] = [];
  readonly added: { accountId: string; validations: number; valid: number; byCode: Record<string, number> }[] = [];
  readonly validatedIds: string[] = [];
  readonly recentGroups: RecentGroup[] = [];
  record(accountId: string, code: string, valid: boolean): void {
    this.records.push({ accountId, code, valid });
  }
  add(accountId: string, _hour: Date, validations: number, valid: number, byCode: Record<string, number> = {}): void {
    this.added.push({ accountId, validations, valid, byCode });
  }
  validated(_accountId: string, licenseId: string): void {
    this.validatedIds.push(licenseId);
  }
  addRecent(g: RecentGroup): void {
    this.recentGroups.push(g);
  }
  async recent(licenseId: string, limit: number): Promise<RecentGroup[]> {
    return this.recentGroups.filter((g) => g.licenseId === licenseId).slice(0, limit);
  }
}

async function setup(productPolicy = policy()) {
  const s = licenseSetup({ policy: productPolicy });
  const lic = await s.issued();
  const counter = new RecordingCounter();
  const licenses = new LicenseCache(s.store, new FakeBus(), 100, 60_000);
  const deps = { licenses, products: s.products, store: s.store, counter, clock: s.clock };
  const ask = (
    key: string,
    over: Partial<{
      account_id: string;
      fingerprint: string;
      product_id: string;
      from_store: boolean;
      already_counted: boolean;
    }> = {},
  ) =>
    validateLicense(deps, { account_id: 'acct_A', key, product_id: '', fingerprint: '', from_store: false, ...over });
  return { ...s, lic, counter, ask, deps: { ...s.deps, outbox: licenses.outbox(s.outbox) } };
}

it("a gateway's second ask of one validation (already_counted, from the store) is judged but not counted again", async () => {
  const { ask, lic, counter } = await setup();
  expect((await ask(lic.key)).verdict.code).toBe('valid');
  expect((await ask(lic.key, { from_store: true, already_counted: true })).verdict.code).toBe('valid');
  expect(counter.records).toHaveLength(1);
  expect(counter.validatedIds).toEqual([lic._id]);
  expect(counter.recentGroups).toHaveLength(1);
});

it('a valid key is valid, counted once, and its licence marked as validated', async () => {
  const { ask, lic, counter } = await setup();
  const { verdict } = await ask(lic.key);
  expect(verdict).toMatchObject({ valid: true, code: 'valid', visible: true });
  expect(counter.records).toEqual([{ accountId: 'acct_A', code: 'valid', valid: true }]);
  expect(counter.validatedIds).toEqual([lic._id]);
  expect(counter.recentGroups).toEqual([expect.objectContaining({ licenseId: lic._id, code: 'valid', count: 1 })]);
});

it("another account's key is not found there, and nothing of the licence is counted for that account", async () => {
  const { ask, lic, counter } = await setup();
  const { verdict } = await ask(lic.key, { account_id: 'acct_B' });
  expect(verdict).toMatchObject({ valid: false, code: 'not_found', visible: false });
  expect(counter.validatedIds).toEqual([]);
  expect(counter.records).toEqual([{ accountId: 'acct_B', code: 'not_found', valid: false }]);
});

it('a malformed key is judged without reading the store', async () => {
  const { ask, store } = await setup();
  const read = jest.spyOn(store, 'findByKey');
  expect((await ask('not!a!key')).verdict.code).toBe('not_found');
  expect(read).not.toHaveBeenCalled();
});

it('a suspension made on this instance is seen by the next validation', async () => {
  const { ask, lic, deps } = await setup();
  await ask(lic.key);
  await transitionLicense(deps, { account_id: 'acct_A', key: lic.key, action: 'suspend' });
  expect((await ask(lic.key)).verdict.code).toBe('suspended');
});

it('with activation required: an active machine is valid, an unknown one is not activated, one past the limit is refused', async () => {
  const { ask, lic, deps } = await setup(policy({ require_activation: true, max_activations: 1 }));
  expect((await ask(lic.key, { fingerprint: 'fp-1' })).verdict.code).toBe('not_activated');
  await activate(deps, { account_id: 'acct_A', key: lic.key, fingerprint: 'fp-1', name: '' });
  expect((await ask(lic.key, { fingerprint: 'fp-1' })).verdict.code).toBe('valid');
  expect((await ask(lic.key, { fingerprint: 'fp-2' })).verdict.code).toBe('activation_limit_reached');
});

it('a licence with more machines than a cache holds is judged by exact reads', async () => {
  const { ask, lic, deps, store } = await setup(policy({ require_activation: true, max_activations: 1000 }));
  for (let i = 0; i <= MAX_CACHED_FINGERPRINTS; i++)
    await activate(deps, { account_id: 'acct_A', key: lic.key, fingerprint: `fp-${i}`, name: '' });
  const exact = jest.spyOn(store, 'findActivation');
  expect((await ask(lic.key, { fingerprint: `fp-${MAX_CACHED_FINGERPRINTS}` })).verdict.code).toBe('valid');
  expect(exact).toHaveBeenCalledTimes(1);
});

it('gateway counts are added; malformed ones are dropped, never stored', () => {
  const counter = new RecordingCounter();
  const hour = '2026-03-01T12:00:00.000Z';
  const tally = (over: object) => ({ account_id: 'acct_A', hour, validations: 3, valid: 2, by_code: {}, ...over });
  recordGatewayValidations(counter, {
    tallies: [
      tally({ by_code: { valid: 2, not_found: 1, 'bad.code': 5, suspended: -1 } }),
      tally({ valid: 4 }), // more valid than validations
      tally({ hour: 'yesterday' }),
      tally({ account_id: '' }),
    ],
    last_validated: [
      { account_id: 'acct_A', license_id: 'lic_1', at: hour },
      { account_id: 'acct_A', license_id: 'lic_2', at: 'never' },
    ],
    seen: [
      { account_id: 'acct_A', license_id: 'lic_1', hour, code: 'valid', fingerprint: 'fp', count: 2, last_at: hour },
      { account_id: 'acct_A', license_id: 'lic_1', hour, code: 'nope', fingerprint: 'fp', count: 2, last_at: hour },
      { account_id: 'acct_A', license_id: 'lic_1', hour, code: 'valid', fingerprint: 'fp', count: 0, last_at: hour },
    ],
  } as RecordValidationsRequest);
  expect(counter.added).toEqual([
    { accountId: 'acct_A', validations: 3, valid: 2, byCode: { valid: 2, not_found: 1 } },
  ]);
  expect(counter.validatedIds).toEqual(['lic_1']);
  expect(counter.recentGroups).toEqual([expect.objectContaining({ licenseId: 'lic_1', code: 'valid', count: 2 })]);
});

it("a licence's recent validations are its own account's only, at most 50", async () => {
  const { ask, lic, counter, store } = await setup();
  await ask(lic.key);
  expect(await recentValidations(store, counter, { account_id: 'acct_A', key: lic.key, limit: 500 })).toHaveLength(1);
  await expect(
    recentValidations(store, counter, { account_id: 'acct_B', key: lic.key, limit: 5 }),
  ).rejects.toMatchObject({ code: 'not_found' });
});
