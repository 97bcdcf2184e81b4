import { bucketOf, bucketsToSweep, expiryBucket } from '../../src/domain/expiry';
import { ExpirySweeper } from '../../src/jobs/expiry-sweeper';
import type { LicenseDoc, SweepStateDoc } from '../../src/store/models';
import type { LicenseStore } from '../../src/store/queries';
import type { Outbox } from '@licensing/runtime';
import { FakeProducts } from '../../../../test/support/fakes/checkout-peers';
import { licenseSetup, policy as productPolicy } from '../../../../test/support/fakes/license-deps';
import { DAY_MS, effectiveStatus } from '@licensing/proto';

const at = (iso: string) => new Date(iso);

describe('expiry buckets', () => {
  it('files a licence under the hour its grace ends, or the current hour when that has passed', () => {
    const now = at('2026-11-23T13:20:00Z');
    expect(bucketOf(now)).toBe('2026-11-23T13');
    expect(expiryBucket(at('2027-01-05T09:59:59Z'), false, now)).toBe('2027-01-05T09');
    expect(expiryBucket(at('2026-10-01T00:00:00Z'), false, now)).toBe('2026-11-23T13');
    expect(expiryBucket(null, false, now)).toBeNull(); // perpetual
    expect(expiryBucket(at('2027-01-05T09:00:00Z'), true, now)).toBeNull(); // already announced
  });

  it('sweeps from the first bucket not done through the current hour, at most max', () => {
    const now = at('2026-11-23T13:20:00Z');
    expect(bucketsToSweep('2026-11-23T10', now, 10)).toEqual(['2026-11-23T11', '2026-11-23T12', '2026-11-23T13']);
    expect(bucketsToSweep('2026-11-23T13', now, 10)).toEqual([]);
    expect(bucketsToSweep(null, now, 10)).toEqual(['2026-11-23T13']);
    expect(bucketsToSweep('2026-11-20T00', now, 2)).toEqual(['2026-11-20T01', '2026-11-20T02']);
  });
});

// The sweeper against a fake store (the integration tests run it over FerretDB): what it asks for per pass.
describe('expiry sweeper', () => {
  const policy = {
    duration_days: 30,
    max_activations: null,
    grace_days: 0,
    require_activation: false,
    validate_keys_see_email: false,
  };
  const license = (id: string, over: Partial<LicenseDoc> = {}): LicenseDoc =>
    ({
      _id: id,
      account_id: 'acct_a',
      product_id: 'prod_a',
      key: 'K',
      customer_email: 'a@example.com',
      status: 'active',
      expires_at: at('2026-11-23T12:30:00Z'),
      grace_ends_at: at('2026-11-23T12:30:00Z'),
      policy,
      expired_notified: false,
      expiry_bucket: '2026-11-23T12',
      created_at: at('2026-10-24T12:30:00Z'),
      ...over,
    }) as LicenseDoc;

  function fakeStore(docs: LicenseDoc[], state: SweepStateDoc) {
    const asked: string[] = [];
    const store = {
      models: { License: {} },
      sweepState: async () => ({ ...state }),
      saveSweepState: async (s: SweepStateDoc) => void Object.assign(state, s),
      backfillExpiryBuckets: async () => null,
      earliestFiledBucket: async () =>
        docs.flatMap((d) => (d.expiry_bucket ? [d.expiry_bucket] : [])).sort()[0] ?? null,
      inExpiryRange: async function* (first: string, last: string) {
        asked.push(`${first}..${last}`);
        for (const d of docs.filter((x) => x.expiry_bucket && x.expiry_bucket >= first && x.expiry_bucket <= last))
          yield d;
      },
      inExpiryBucket: async (bucket: string, after: string) => {
        asked.push(bucket);
        return docs.filter((d) => d.expiry_bucket === bucket && d._id > after);
      },
      markExpired: async (id: string) => {
        const d = docs.find((x) => x._id === id)!;
        if (d.expired_notified) return false;
        Object.assign(d, { expired_notified: true, expiry_bucket: null });
        return true;
      },
    };
    return { store: store as unknown as LicenseStore, asked, state };
  }

  /** A sweeper over `store` whose clock reads `now`. */
  const sweeperAt = (store: LicenseStore, now: Date) =>
    new ExpirySweeper(store, { flush: () => undefined } as unknown as Outbox, { now: () => now }, new FakeProducts());

  it('asks only for the buckets since the last pass, however many licences exist, and announces each due licence once', async () => {
    const now = at('2026-11-23T13:20:00Z');
    const docs = [
      license('lic_a'),
      license('lic_b', { status: 'suspended' }),
      license('lic_c', { expiry_bucket: '2027-03-01T00', grace_ends_at: at('2027-03-01T00:10:00Z') }),
    ];
    const { store, asked, state } = fakeStore(docs, {
      _id: 'license-expiry',
      through: '2026-11-23T11',
      backfilled: true,
    });
    const sweeper = sweeperAt(store, now);
    expect(await sweeper.sweep()).toBe(1);
    expect(asked).toEqual(['2026-11-23T12', '2026-11-23T13']);
    expect(state.through).toBe('2026-11-23T12'); // the current hour is looked at again next time
    asked.length = 0;
    expect(await sweeper.sweep()).toBe(0);
    expect(asked).toEqual(['2026-11-23T13']);
    expect(docs.map((d) => d.expired_notified)).toEqual([true, false, false]);
  });

  it('far behind (downtime, a clock moved on), it catches up in one walk instead of a query per hour', async () => {
    const now = at('2026-11-23T13:20:00Z');
    const docs = [
      license('lic_a', { expiry_bucket: '2026-11-20T05', grace_ends_at: at('2026-11-20T05:10:00Z') }),
      license('lic_b'),
    ];
    const { store, asked, state } = fakeStore(docs, {
      _id: 'license-expiry',
      through: '2026-11-20T00',
      backfilled: true,
    });
    const sweeper = sweeperAt(store, now);
    expect(await sweeper.sweep()).toBe(2);
    expect(asked).toEqual(['2026-11-20T01..2026-11-23T12', '2026-11-23T13']);
    expect(state.through).toBe('2026-11-23T12');
  });

  it('however far behind, one pass catches up (a walk of a week per pass took a pass per week behind)', async () => {
    const now = at('2026-11-23T13:20:00Z');
    const docs = [license('lic_a', { expiry_bucket: '2026-10-01T05', grace_ends_at: at('2026-10-01T05:10:00Z') })];
    const { store, asked, state } = fakeStore(docs, {
      _id: 'license-expiry',
      through: '2026-09-30T00',
      backfilled: true,
    });
    const sweeper = sweeperAt(store, now);
    expect(await sweeper.sweep()).toBe(1);
    expect(asked).toEqual(['2026-09-30T01..2026-11-23T12', '2026-11-23T13']);
    expect(state.through).toBe('2026-11-23T12');
  });

  it('its first pass starts at the earliest licence filed: one filed in an hour already past when the sweeper first runs is announced', async () => {
    const now = at('2026-11-23T13:20:00Z');
    const docs = [license('lic_a', { expiry_bucket: '2026-11-10T05', grace_ends_at: at('2026-11-10T05:10:00Z') })];
    const { store, state } = fakeStore(docs, { _id: 'license-expiry', through: null, backfilled: false });
    const sweeper = sweeperAt(store, now);
    expect(await sweeper.sweep()).toBe(1);
    expect(docs[0].expired_notified).toBe(true);
    expect(state).toMatchObject({ backfilled: true, through: '2026-11-23T12' });
  });
});

// What a pass does to a licence whose grace has ended, by its policy's expiration_strategy.
describe('expiry sweeper and expiration_strategy', () => {
  async function expiredUnder(strategy: string) {
    const s = licenseSetup({ policy: productPolicy({ expiration_strategy: strategy }) });
    const lic = await s.issued();
    s.clock.advance(365 * DAY_MS + 7 * DAY_MS); // its expiry plus its 7 days' grace
    const sweeper = new ExpirySweeper(s.store, s.outbox, s.clock, s.products);
    const marked = await sweeper.sweep();
    const stored = s.store.licenses.get(lic._id)!;
    const published = s.store.events.map((e) => [e.type, (e.data as { license: { status: string } }).license.status]);
    return { s, lic, marked, stored, published, sweeper };
  }

  it('revoke_access: stores the licence revoked and publishes license.expired then license.revoked, once', async () => {
    const { s, lic, marked, stored, published, sweeper } = await expiredUnder('revoke_access');
    expect(marked).toBe(1);
    expect([stored.status, stored.expired_notified, stored.expiry_bucket]).toEqual(['revoked', true, null]);
    expect(published).toEqual([
      ['license.expired', 'revoked'],
      ['license.revoked', 'revoked'],
    ]);
    expect(s.store.events[1].id).toBe(`evt_revoked_${lic._id.slice(4)}_${lic.grace_ends_at!.getTime()}`);
    expect(s.outbox.flushed).toEqual([{ model: 'License', id: lic._id }]);
    expect(await sweeper.sweep()).toBe(0);
    expect(s.store.events).toHaveLength(2);
  });

  it('restrict and maintain_access: the licence stays stored active (expired, derived) with license.expired alone', async () => {
    for (const strategy of ['restrict', 'maintain_access']) {
      const { s, marked, stored, published } = await expiredUnder(strategy);
      expect(marked).toBe(1);
      expect([stored.status, effectiveStatus(stored, s.clock.now())]).toEqual(['active', 'expired']);
      expect(published).toEqual([['license.expired', 'expired']]);
    }
  });
});
