import type { DomainEvent } from '@licensing/proto';
import { client, startStack, TestClock, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';

// Floating seats (policy lease_seconds) over real services: leases taken and renewed, lapse judged at
// answer time by the gateway's cache and the licence service alike, lapsed seats reclaimed when a slot is
// needed (under concurrency too) and by the sweep, and the heartbeat's refusals. Time moves by the
// stack's test clock, never by sleeping.

let stack: Stack;
let events: EventLog;
let api: ReturnType<typeof client>;
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({}, {}, clock);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
});

async function licenseWith(policy: Record<string, unknown>): Promise<string> {
  const product = await api('POST', '/api/v1/products', { name: 'Floating', policy });
  expect(product.status).toBe(201);
  const license = await api('POST', '/api/v1/licenses', {
    product_id: product.body.id,
    customer_email: 'f@example.com',
  });
  return license.body.license_key as string;
}

const activate = (key: string, fingerprint: string) =>
  api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint });
const heartbeat = (key: string, id: string) => api('POST', `/api/v1/licenses/${key}/activations/${id}/heartbeat`);
const validate = (key: string, fingerprint: string) => api('POST', '/api/v1/keys/validate', { key, fingerprint });
const listed = async (key: string) =>
  (await api('GET', `/api/v1/licenses/${key}/activations?limit=100`)).body.data as {
    id: string;
    fingerprint: string;
  }[];
const lapsedEventOf = (activationId: string) => (e: DomainEvent) =>
  e.type === 'license.deactivated' &&
  (e.data as { activation: { id: string } }).activation.id === activationId &&
  (e.data as { reason: string }).reason === 'lapsed';

describe('policy.lease_seconds', () => {
  it.each([29, 86_401, 0, 1.5, 'sixty'])(
    '%p is refused with 400 naming the field, on create and on update',
    async (bad) => {
      const created = await api('POST', '/api/v1/products', { name: 'Bad lease', policy: { lease_seconds: bad } });
      expect(created.status).toBe(400);
      expect(JSON.stringify(created.body)).toContain('lease_seconds');
      const product = (await api('POST', '/api/v1/products', { name: 'Good' })).body.id;
      const updated = await api('PATCH', `/api/v1/products/${product}`, { policy: { lease_seconds: bad } });
      expect(updated.status).toBe(400);
      expect(JSON.stringify(updated.body)).toContain('lease_seconds');
    },
  );

  it('30 and 86,400 are floating, null (the default) node-locked', async () => {
    for (const lease of [30, 86_400, null]) {
      const res = await api('POST', '/api/v1/products', { name: 'Lease', policy: { lease_seconds: lease } });
      expect(res.status).toBe(201);
      expect(res.body.policy.lease_seconds).toBe(lease);
    }
    expect((await api('POST', '/api/v1/products', { name: 'Default' })).body.policy.lease_seconds).toBeNull();
  });
});

describe('a floating seat', () => {
  it('takes a lease, a heartbeat renews it, and a node-locked activation has none', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2 });
    const before = clock.now().getTime();
    const first = await activate(key, 'float-a');
    expect(first.status).toBe(201);
    const lease = Date.parse(first.body.lease_expires_at);
    expect(lease).toBeGreaterThanOrEqual(before + 30_000);
    expect(lease).toBeLessThanOrEqual(clock.now().getTime() + 30_000);
    await events.waitFor((e) => e.type === 'license.activated' && (e.data as any).activation.id === first.body.id);
    clock.advance(20_000);
    const beat = await heartbeat(key, first.body.id);
    expect(beat.status).toBe(200);
    expect(beat.body.id).toBe(first.body.id);
    expect(Date.parse(beat.body.lease_expires_at)).toBeGreaterThanOrEqual(lease + 20_000);
    const nodeLocked = await licenseWith({ max_activations: 2 });
    expect((await activate(nodeLocked, 'fixed-a')).body.lease_expires_at).toBeNull();
  });

  it('lapses: validation answers lease_expired from the gateway cache and the service, heartbeat 409, re-activation renews', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2, require_activation: true });
    const act = (await activate(key, 'lapse-a')).body;
    await eventually(async () => expect((await validate(key, 'lapse-a')).body.code).toBe('valid'));
    const valid = (await validate(key, 'lapse-a')).body; // from the gateway's memory
    expect(Date.parse(valid.cache_until)).toBeLessThanOrEqual(Date.parse(act.lease_expires_at));
    clock.advance(31_000);
    for (let i = 0; i < 2; i++) {
      const answer = await validate(key, 'lapse-a');
      expect(answer.body).toMatchObject({ valid: false, code: 'lease_expired', next_action: 'activate' });
    }
    const refused = await heartbeat(key, act.id);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/^lease_expired/);
    const file = await api('POST', `/api/v1/licenses/${key}/file`, { fingerprint: 'lapse-a' });
    expect(file.status).toBe(409);
    expect(file.body.detail).toMatch(/^lease_expired/);
    // Idempotent as ever: the same activation, a fresh lease.
    const again = await activate(key, 'lapse-a');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(act.id);
    expect(Date.parse(again.body.lease_expires_at)).toBeGreaterThan(clock.now().getTime());
    expect((await validate(key, 'lapse-a')).body.code).toBe('valid');
    expect((await api('POST', `/api/v1/licenses/${key}/file`, { fingerprint: 'lapse-a' })).status).toBe(201);
  });

  it("a heartbeat needs no event: a cache's copy of the old lease is not trusted once it has run out", async () => {
    const key = await licenseWith({ lease_seconds: 30, require_activation: true });
    const act = (await activate(key, 'renewed-a')).body;
    await eventually(async () => expect((await validate(key, 'renewed-a')).body.code).toBe('valid'));
    expect((await validate(key, 'renewed-a')).body.code).toBe('valid'); // both caches now hold the first lease
    clock.advance(20_000);
    expect((await heartbeat(key, act.id)).status).toBe(200);
    clock.advance(20_000); // past the first lease, within the renewed one
    expect((await validate(key, 'renewed-a')).body.code).toBe('valid');
    expect((await validate(key, 'renewed-a')).body.code).toBe('valid');
  });

  it('a lapsed seat is reclaimed when a new machine needs its slot, with license.deactivated reason lapsed', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2, require_activation: true });
    const a = (await activate(key, 'reclaim-a')).body;
    const b = (await activate(key, 'reclaim-b')).body;
    expect((await activate(key, 'reclaim-c')).status).toBe(409); // full, nobody lapsed
    clock.advance(20_000);
    expect((await heartbeat(key, b.id)).status).toBe(200);
    clock.advance(15_000); // a lapsed, b still held
    const c = await activate(key, 'reclaim-c');
    expect(c.status).toBe(201);
    const event = await events.waitFor(lapsedEventOf(a.id));
    expect((event.data as any).activation.fingerprint).toBe('reclaim-a');
    expect((event.data as any).license.key).toBe(key);
    expect((await listed(key)).map((x) => x.fingerprint).sort()).toEqual(['reclaim-b', 'reclaim-c']);
    // The reclaimed seat is gone: its heartbeat is refused, and it validates as a machine without a seat.
    const refused = await heartbeat(key, a.id);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/lease_expired.*reclaimed/);
    await eventually(async () => expect((await validate(key, 'reclaim-a')).body.code).toBe('activation_limit_reached'));
    expect((await activate(key, 'reclaim-d')).status).toBe(409); // b and c hold both slots
  });

  it('N parallel activations on a full floating licence whose seats all lapsed never exceed max_activations', async () => {
    const max = 3;
    const key = await licenseWith({ lease_seconds: 30, max_activations: max });
    const old = await Promise.all(Array.from({ length: max }, (_, i) => activate(key, `old-${i}`)));
    expect(old.every((r) => r.status === 201)).toBe(true);
    clock.advance(31_000);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => activate(key, `new-${i}`)));
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const created = results.filter((r) => r.status === 201).length;
    expect(created).toBeGreaterThanOrEqual(1);
    expect(created).toBeLessThanOrEqual(max);
    const active = await listed(key);
    expect(active.length).toBeLessThanOrEqual(max);
    expect(active.filter((x) => x.fingerprint.startsWith('new-')).length).toBe(created);
    // Every lapsed seat whose slot was taken was announced once.
    for (const r of old) if (!active.some((x) => x.id === r.body.id)) await events.waitFor(lapsedEventOf(r.body.id));
  });

  it('the sweep reclaims lapsed seats nobody needed, an hour after they lapsed', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 5 });
    const idle = (await activate(key, 'idle-a')).body;
    const kept = (await activate(key, 'kept-a')).body;
    clock.advance(31_000);
    expect((await listed(key)).length).toBe(2); // lapsed, not yet reclaimed
    expect((await activate(key, 'kept-a')).status).toBe(200); // kept-a renews; idle-a stays lapsed
    clock.advance(2 * 3600_000);
    await events.waitFor(lapsedEventOf(idle.id), 15_000);
    await events.waitFor(lapsedEventOf(kept.id), 15_000);
    await eventually(async () => expect(await listed(key)).toEqual([]));
  });
});

describe('heartbeat refusals', () => {
  it("another licence's activation and an unknown one are 404; node-locked and deactivated ones 409", async () => {
    const key = await licenseWith({ lease_seconds: 60 });
    const other = await licenseWith({ lease_seconds: 60 });
    const theirs = (await activate(other, 'theirs')).body;
    const wrong = await heartbeat(key, theirs.id);
    expect(wrong.status).toBe(404);
    expect(wrong.body.code).toBe('not_found');
    expect((await heartbeat(key, 'act_01JD8Z3K6Q2W4E5R6T7Y8V9X0P')).status).toBe(404);
    expect((await heartbeat(key, 'not-an-id')).status).toBe(404);

    const fixed = await licenseWith({ max_activations: 2 });
    const pinned = (await activate(fixed, 'pinned')).body;
    const locked = await heartbeat(fixed, pinned.id);
    expect(locked.status).toBe(409);
    expect(locked.body.code).toBe('conflict');
    expect(locked.body.detail).toMatch(/no lease/);

    const mine = (await activate(key, 'mine')).body;
    expect((await api('DELETE', `/api/v1/licenses/${key}/activations/${mine.id}`)).status).toBe(204);
    const gone = await heartbeat(key, mine.id);
    expect(gone.status).toBe(409);
    expect(gone.body.detail).toMatch(/deactivated/);
    const event = await events.waitFor(
      (e) => e.type === 'license.deactivated' && (e.data as any).activation.id === mine.id,
    );
    expect((event.data as any).reason).toBe('requested');
  });
});
