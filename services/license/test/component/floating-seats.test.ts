import { type AppError, newId } from '@licensing/runtime';
import { type DomainEvent, type LicensePolicy, ValidateLicenseRequest } from '@licensing/proto';
import type { EventLog } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { type RunningLicense, useLicenseService } from './running-license';

// Floating seats (policy lease_seconds) as the licence service keeps them, called over gRPC as the
// gateway calls it (real FerretDB and NATS; time moves by the service's clock, never by sleeping):
// leases taken and renewed, lapse judged at answer time (its own memory of a licence included), lapsed
// seats reclaimed when a slot is needed (under concurrency too) and by the sweep, and the heartbeat's
// refusals. The gateway's side (lapse judged from its cache, the statuses): gateway/test/component/
// floating-seat-routes.test.ts; the policy's range: services/product/test/component/product-policy.test.ts.

let svc: RunningLicense;
let events: EventLog;
const accountId = newId('acct');

useLicenseService((started, log) => {
  svc = started;
  events = log;
});

const licenseWith = (policy: Partial<LicensePolicy>) =>
  svc.issue(accountId, svc.product(accountId, { max_activations: undefined, ...policy }).id, 'f@example.com');
const activate = (key: string, fingerprint: string) =>
  svc.api.activate({ account_id: accountId, key, fingerprint, name: '' });
const heartbeat = (key: string, activation_id: string) =>
  svc.api.heartbeat({ account_id: accountId, key, activation_id });
const validate = (key: string, fingerprint: string) =>
  svc.api.validateLicense(
    ValidateLicenseRequest.fromPartial({ account_id: accountId, key, fingerprint, key_scope: 'full' }),
  );
const file = (key: string, fingerprint: string) =>
  svc.api.issueLicenseFile({ account_id: accountId, key, fingerprint, ttl_days: 0, key_scope: 'full' });
const listed = async (key: string) =>
  (await svc.api.listActivations({ account_id: accountId, key, page: { limit: 100, starting_after: '' } })).data;
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );
const lapsedEventOf = (activationId: string) => (e: DomainEvent) =>
  e.type === 'license.deactivated' &&
  (e.data as { activation: { id: string } }).activation.id === activationId &&
  (e.data as { reason: string }).reason === 'lapsed';

describe('a floating seat', () => {
  it('25 machines starting at once on a licence of 25 floating seats each get a seat of their own', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 25 });
    const seats = await Promise.all(Array.from({ length: 25 }, (_, i) => activate(key, `office-${i}`)));
    expect(seats.every((s) => s.created)).toBe(true);
    expect(new Set(seats.map((s) => s.activation!.id)).size).toBe(25);
    expect(await listed(key)).toHaveLength(25);
  });

  it('takes a lease, a heartbeat renews it, and a node-locked activation has none', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2 });
    const before = svc.clock.now().getTime();
    const first = await activate(key, 'float-a');
    expect(first.created).toBe(true);
    const lease = Date.parse(first.activation!.lease_expires_at);
    expect(lease).toBeGreaterThanOrEqual(before + 30_000);
    expect(lease).toBeLessThanOrEqual(svc.clock.now().getTime() + 30_000);
    await events.waitFor(
      (e) => e.type === 'license.activated' && (e.data as any).activation.id === first.activation!.id,
    );
    svc.clock.advance(20_000);
    const beat = await heartbeat(key, first.activation!.id);
    expect(beat.id).toBe(first.activation!.id);
    expect(Date.parse(beat.lease_expires_at)).toBeGreaterThanOrEqual(lease + 20_000);
    const nodeLocked = await licenseWith({ max_activations: 2 });
    expect((await activate(nodeLocked, 'fixed-a')).activation!.lease_expires_at).toBe('');
  });

  it('lapses: validation answers lease_expired from the gateway cache and the service, heartbeat 409, re-activation renews', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2, require_activation: true });
    const act = (await activate(key, 'lapse-a')).activation!;
    const valid = await validate(key, 'lapse-a');
    expect(valid.code).toBe('valid');
    expect(Date.parse(valid.cache_until)).toBeLessThanOrEqual(Date.parse(act.lease_expires_at));
    svc.clock.advance(31_000);
    for (let i = 0; i < 2; i++) {
      expect(await validate(key, 'lapse-a')).toMatchObject({
        valid: false,
        code: 'lease_expired',
        next_action: 'activate',
      });
    }
    const refused = await refusal(heartbeat(key, act.id));
    expect(refused.code).toBe('conflict');
    expect(refused.message).toMatch(/^lease_expired/);
    const noFile = await refusal(file(key, 'lapse-a'));
    expect(noFile.code).toBe('conflict');
    expect(noFile.message).toMatch(/^lease_expired/);
    // Idempotent as ever: the same activation, a fresh lease.
    const again = await activate(key, 'lapse-a');
    expect(again.created).toBe(false);
    expect(again.activation!.id).toBe(act.id);
    expect(Date.parse(again.activation!.lease_expires_at)).toBeGreaterThan(svc.clock.now().getTime());
    expect((await validate(key, 'lapse-a')).code).toBe('valid');
    expect((await file(key, 'lapse-a')).signature).not.toBe('');
  });

  it("a heartbeat needs no event: a cache's copy of the old lease is not trusted once it has run out", async () => {
    const key = await licenseWith({ lease_seconds: 30, require_activation: true });
    const act = (await activate(key, 'renewed-a')).activation!;
    expect((await validate(key, 'renewed-a')).code).toBe('valid');
    expect((await validate(key, 'renewed-a')).code).toBe('valid'); // the service's memory now holds the first lease
    svc.clock.advance(20_000);
    await heartbeat(key, act.id);
    svc.clock.advance(20_000); // past the first lease, within the renewed one
    expect((await validate(key, 'renewed-a')).code).toBe('valid');
    expect((await validate(key, 'renewed-a')).code).toBe('valid');
  });

  it('a lapsed seat is reclaimed when a new machine needs its slot, with license.deactivated reason lapsed', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2, require_activation: true });
    const a = (await activate(key, 'reclaim-a')).activation!;
    const b = (await activate(key, 'reclaim-b')).activation!;
    expect((await refusal(activate(key, 'reclaim-c'))).code).toBe('conflict'); // full, nobody lapsed
    svc.clock.advance(20_000);
    await heartbeat(key, b.id);
    svc.clock.advance(15_000); // a lapsed, b still held
    expect((await activate(key, 'reclaim-c')).created).toBe(true);
    const event = await events.waitFor(lapsedEventOf(a.id));
    expect((event.data as any).activation.fingerprint).toBe('reclaim-a');
    expect((event.data as any).license.key).toBe(key);
    expect((await listed(key)).map((x) => x.fingerprint).sort()).toEqual(['reclaim-b', 'reclaim-c']);
    // The reclaimed seat is gone: its heartbeat is refused, and it validates as a machine without a seat.
    const refused = await refusal(heartbeat(key, a.id));
    expect(refused.code).toBe('conflict');
    expect(refused.message).toMatch(/lease_expired.*reclaimed/);
    expect((await validate(key, 'reclaim-a')).code).toBe('activation_limit_reached');
    expect((await refusal(activate(key, 'reclaim-d'))).code).toBe('conflict'); // b and c hold both slots
  });

  it('N parallel activations on a full floating licence whose seats all lapsed never exceed max_activations', async () => {
    const max = 3;
    const key = await licenseWith({ lease_seconds: 30, max_activations: max });
    const old = await Promise.all(Array.from({ length: max }, (_, i) => activate(key, `old-${i}`)));
    expect(old.every((r) => r.created)).toBe(true);
    svc.clock.advance(31_000);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => activate(key, `new-${i}`).catch((err: AppError) => err)),
    );
    expect(results.every((r) => ('created' in r ? r.created : r.code === 'conflict'))).toBe(true);
    const created = results.filter((r) => 'created' in r).length;
    expect(created).toBeGreaterThanOrEqual(1);
    expect(created).toBeLessThanOrEqual(max);
    const active = await listed(key);
    expect(active.length).toBeLessThanOrEqual(max);
    expect(active.filter((x) => x.fingerprint.startsWith('new-')).length).toBe(created);
    // Every lapsed seat whose slot was taken was announced once.
    for (const r of old)
      if (!active.some((x) => x.id === r.activation!.id)) await events.waitFor(lapsedEventOf(r.activation!.id));
  });

  it('the sweep reclaims lapsed seats nobody needed, an hour after they lapsed', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 5 });
    const idle = (await activate(key, 'idle-a')).activation!;
    const kept = (await activate(key, 'kept-a')).activation!;
    svc.clock.advance(31_000);
    expect((await listed(key)).length).toBe(2); // lapsed, not yet reclaimed
    expect((await activate(key, 'kept-a')).created).toBe(false); // kept-a renews; idle-a stays lapsed
    svc.clock.advance(2 * 3600_000);
    await events.waitFor(lapsedEventOf(idle.id), 15_000);
    await events.waitFor(lapsedEventOf(kept.id), 15_000);
    await eventually(async () => expect(await listed(key)).toEqual([]));
  });
});

describe('heartbeat refusals', () => {
  it("another licence's activation and an unknown one are 404; node-locked and deactivated ones 409", async () => {
    const key = await licenseWith({ lease_seconds: 60 });
    const other = await licenseWith({ lease_seconds: 60 });
    const theirs = (await activate(other, 'theirs')).activation!;
    expect((await refusal(heartbeat(key, theirs.id))).code).toBe('not_found');
    expect((await refusal(heartbeat(key, 'act_01JD8Z3K6Q2W4E5R6T7Y8V9X0P'))).code).toBe('not_found');
    expect((await refusal(heartbeat(key, 'not-an-id'))).code).toBe('not_found');

    const fixed = await licenseWith({ max_activations: 2 });
    const pinned = (await activate(fixed, 'pinned')).activation!;
    const locked = await refusal(heartbeat(fixed, pinned.id));
    expect(locked.code).toBe('conflict');
    expect(locked.message).toMatch(/no lease/);

    const mine = (await activate(key, 'mine')).activation!;
    await svc.api.deactivate({
      account_id: accountId,
      key,
      activation_id: mine.id,
      key_scope: 'full',
      fingerprint: '',
    });
    const gone = await refusal(heartbeat(key, mine.id));
    expect(gone.code).toBe('conflict');
    expect(gone.message).toMatch(/deactivated/);
    const event = await events.waitFor(
      (e) => e.type === 'license.deactivated' && (e.data as any).activation.id === mine.id,
    );
    expect((event.data as any).reason).toBe('requested');
  });
});
