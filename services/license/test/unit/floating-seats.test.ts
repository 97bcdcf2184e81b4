import fc from 'fast-check';
import {
  heldSeats,
  judge,
  lapsed,
  leasesOf,
  seatFacts,
  type LicenseFacts,
  type PolicySnapshot,
} from '@licensing/proto';
import { RECLAIM_AFTER_MS, reclaimBucket, sweepReclaims } from '../../src/domain/leases';
import { LapsedSeatSweeper } from '../../src/jobs/lapsed-seat-sweeper';
import { activate, heartbeat } from '../../src/use-cases/activations';
import { refusal } from '../../../../test/support/fakes/common';
import { licenseSetup } from '../../../../test/support/fakes/license-deps';

// The pure rules of floating seats (proto/rules/lease.ts, the verdict, domain/leases.ts) and the use cases
// over in-memory stores; services/license/test/component/floating-seats.test.ts runs the same over real servers.

const nowMs = Date.parse('2026-06-01T00:00:00Z');
const now = new Date(nowMs);

describe('lapse, judged at the moment of asking', () => {
  it('a lease that ended at or before now has lapsed; node-locked (no lease) never does', () => {
    expect(lapsed(nowMs, nowMs)).toBe(true);
    expect(lapsed(nowMs - 1, nowMs)).toBe(true);
    expect(lapsed(nowMs + 1, nowMs)).toBe(false);
    expect(lapsed(null, nowMs)).toBe(false);
    expect(lapsed(undefined, nowMs)).toBe(false);
  });

  it('seats held are the active ones less the lapsed floating ones, whatever the mix', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: -100, max: 100 }), { nil: null }), { maxLength: 40 }),
        (ends) => {
          const fingerprints = ends.map((_, i) => `m${i}`);
          const leases = new Map<string, number>();
          ends.forEach((e, i) => {
            if (e !== null) leases.set(fingerprints[i], nowMs + e);
          });
          const expected = ends.filter((e) => e === null || e > 0).length;
          expect(heldSeats(new Set(fingerprints), leases, nowMs)).toBe(expected);
        },
      ),
    );
  });

  it("the asking machine's facts: held with its lease end, lapsed, or unknown", () => {
    const active = new Set(['a', 'b', 'c']);
    const leases = new Map([
      ['a', nowMs + 5000],
      ['b', nowMs - 1],
    ]);
    expect(seatFacts(active, leases, 'a', nowMs)).toEqual({
      fingerprintActive: true,
      count: 2,
      leaseExpired: false,
      leaseEndsAt: nowMs + 5000,
    });
    expect(seatFacts(active, leases, 'b', nowMs)).toMatchObject({ fingerprintActive: false, leaseExpired: true });
    expect(seatFacts(active, leases, 'c', nowMs)).toMatchObject({ fingerprintActive: true, leaseEndsAt: null });
    expect(seatFacts(active, leases, 'z', nowMs)).toMatchObject({ fingerprintActive: false, leaseExpired: false });
    expect(seatFacts(active, leases, '', nowMs)).toMatchObject({ fingerprintActive: false, count: 2 });
  });

  it('leases travel as parallel RFC 3339 lists; an empty entry is node-locked', () => {
    const end = new Date(nowMs + 1000).toISOString();
    expect([...leasesOf(['a', 'b', 'c'], [end, '', 'not a time'])]).toEqual([['a', nowMs + 1000]]);
  });
});

describe('the verdict on a floating seat', () => {
  const policy = (over: Partial<PolicySnapshot> = {}): PolicySnapshot => ({
    duration_days: null,
    max_activations: 2,
    grace_days: 0,
    require_activation: true,
    validate_keys_see_email: false,
    lease_seconds: 60,
    ...over,
  });
  const license = (over: Partial<LicenseFacts> = {}): LicenseFacts => ({
    account_id: 'acct_a',
    product_id: 'prod_1',
    status: 'active',
    expires_at: null,
    policy: policy(),
    ...over,
  });
  const req = { accountId: 'acct_a', productId: '', fingerprint: 'a' };
  const ok = { ok: true as const, key: 'K' };

  it('a lapsed seat answers lease_expired with next_action activate, after the status checks and before activation', () => {
    const lapsedSeat = { fingerprintActive: false, count: 2, leaseExpired: true, leaseEndsAt: null };
    expect(judge(ok, license(), req, lapsedSeat, now)).toMatchObject({
      valid: false,
      code: 'lease_expired',
      nextAction: 'activate',
    });
    // A full licence would say activation_limit_reached: lease_expired comes first.
    expect(judge(ok, license({ status: 'suspended' }), req, lapsedSeat, now).code).toBe('suspended');
    expect(judge(ok, license({ expires_at: new Date(nowMs - 1) }), req, lapsedSeat, now).code).toBe('expired');
    // Without require_activation too: the machine held a seat and lost it.
    const free = license({ policy: policy({ require_activation: false }) });
    expect(judge(ok, free, req, lapsedSeat, now).code).toBe('lease_expired');
  });

  it('a valid answer for a held seat lasts no longer than its lease', () => {
    const held = { fingerprintActive: true, count: 1, leaseExpired: false, leaseEndsAt: nowMs + 30_000 };
    const v = judge(ok, license(), req, held, now);
    expect(v).toMatchObject({ valid: true, code: 'valid' });
    expect(v.cacheUntil.getTime()).toBe(nowMs + 30_000);
  });
});

describe('the sweep bucket', () => {
  it('files a seat under the hour it becomes reclaimable, an hour after its lease ends', () => {
    expect(reclaimBucket(new Date('2026-06-01T10:59:59Z'))).toBe('2026-06-01T11');
    expect(reclaimBucket(new Date('2026-06-01T11:00:00Z'))).toBe('2026-06-01T12');
  });

  it('reclaims only active seats that lapsed at least RECLAIM_AFTER_MS ago', () => {
    const seat = (endOffset: number, deactivated: Date | null = null) => ({
      deactivated_at: deactivated,
      lease_expires_at: new Date(nowMs + endOffset),
    });
    expect(sweepReclaims(seat(-RECLAIM_AFTER_MS), now)).toBe(true);
    expect(sweepReclaims(seat(-RECLAIM_AFTER_MS + 1), now)).toBe(false);
    expect(sweepReclaims(seat(-2 * RECLAIM_AFTER_MS, now), now)).toBe(false);
    expect(sweepReclaims({ deactivated_at: null, lease_expires_at: null }, now)).toBe(false);
  });
});

describe('floating activations and heartbeats (use cases)', () => {
  async function setup(max = 2) {
    const s = licenseSetup({
      policy: {
        duration_days: 365,
        max_activations: max,
        grace_days: 0,
        require_activation: true,
        validate_keys_see_email: false,
        refund_action: 'revoke',
        lease_seconds: 30,
        entitlements: [],
        expiration_strategy: 'restrict',
      },
    });
    const lic = await s.issued();
    const machine = (fingerprint: string) => ({ account_id: 'acct_A', key: lic.key, fingerprint, name: '' });
    return { ...s, lic, machine };
  }

  it('an activation takes a lease and a reclaim bucket; a heartbeat renews both', async () => {
    const { deps, clock, machine, lic } = await setup();
    const { activation } = await activate(deps, machine('a'));
    expect(activation.lease_expires_at).toEqual(new Date(clock.now().getTime() + 30_000));
    expect(activation.reclaim_bucket).toBe(reclaimBucket(activation.lease_expires_at!));
    clock.advance(10_000);
    const renewed = await heartbeat(deps, 'acct_A', lic.key, activation._id);
    expect(renewed.lease_expires_at).toEqual(new Date(clock.now().getTime() + 30_000));
  });

  it('a full licence reclaims a lapsed seat (license.deactivated, reason lapsed) and refuses when none lapsed', async () => {
    const { deps, clock, machine, store, outbox } = await setup();
    const a = (await activate(deps, machine('a'))).activation;
    clock.advance(20_000);
    await activate(deps, machine('b'));
    expect(await refusal(() => activate(deps, machine('c')))).toMatchObject({ code: 'conflict' });
    clock.advance(15_000); // a lapsed, b held
    const c = await activate(deps, machine('c'));
    expect(c.created).toBe(true);
    const reclaimed = store.events.find((e) => e.type === 'license.deactivated');
    expect(reclaimed?.data).toMatchObject({ reason: 'lapsed', activation: { id: a._id, fingerprint: 'a' } });
    expect(outbox.flushed).toContainEqual({ model: 'Activation', id: a._id });
    expect(store.activations.get(a._id)).toMatchObject({ deactivated_reason: 'lapsed', slot_key: `freed:${a._id}` });
  });

  it('heartbeat refusals: unknown 404, lapsed 409 lease_expired, node-locked 409', async () => {
    const { deps, clock, machine, lic } = await setup();
    const a = (await activate(deps, machine('a'))).activation;
    expect(await refusal(() => heartbeat(deps, 'acct_A', lic.key, 'act_01JD8Z3K6Q2W4E5R6T7Y8V9X0P'))).toMatchObject({
      code: 'not_found',
    });
    expect(await refusal(() => heartbeat(deps, 'acct_B', lic.key, a._id))).toMatchObject({ code: 'not_found' });
    clock.advance(30_000);
    const late = await refusal(() => heartbeat(deps, 'acct_A', lic.key, a._id));
    expect(late).toMatchObject({ code: 'conflict' });
    expect(late.message).toMatch(/^lease_expired/);

    const locked = licenseSetup();
    const l = await locked.issued();
    const pinned = (await activate(locked.deps, { account_id: 'acct_A', key: l.key, fingerprint: 'p', name: '' }))
      .activation;
    const refused = await refusal(() => heartbeat(locked.deps, 'acct_A', l.key, pinned._id));
    expect(refused).toMatchObject({ code: 'conflict' });
    expect(refused.message).toMatch(/no lease/);
  });

  it('the sweep reclaims what lapsed an hour ago, and reads nothing else', async () => {
    const { deps, clock, machine, store, outbox } = await setup(5);
    const sweeper = new LapsedSeatSweeper(store, outbox, clock);
    await sweeper.sweep(); // starts at the current hour
    const idle = (await activate(deps, machine('idle'))).activation;
    const busy = (await activate(deps, machine('busy'))).activation;
    const key = (await store.findIdInAccount('acct_A', idle.license_id))!.key;
    // busy is heartbeated every 20 s for over an hour; idle lapses after 30 s.
    for (let elapsed = 0; elapsed <= 3700; elapsed += 20) {
      clock.advance(20_000);
      await heartbeat(deps, 'acct_A', key, busy._id);
      if (elapsed === 20) expect(await sweeper.sweep()).toBe(0); // idle lapsed, but not an hour ago
    }
    store.events.length = 0;
    const read = jest.spyOn(store, 'inReclaimBucket');
    expect(await sweeper.sweep()).toBe(1);
    // It read the lapsed seat alone: the heartbeated one is filed under an hour still to come.
    const seen = (await Promise.all(read.mock.results.map((r) => r.value as Promise<{ _id: string }[]>))).flat();
    expect(seen.map((a) => a._id)).toEqual([idle._id]);
    expect(store.events.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
      ['license.deactivated', 'lapsed'],
    ]);
    expect(store.activations.get(idle._id)?.deactivated_reason).toBe('lapsed');
    expect(store.activations.get(busy._id)?.deactivated_at).toBeNull();
  });
});
