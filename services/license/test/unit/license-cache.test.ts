import type { DomainEvent } from '@licensing/proto';
import { newEnvelope } from '@licensing/runtime';
import { LicenseCache, MAX_CACHED_FINGERPRINTS } from '../../src/caches/license-cache';
import { activate, deactivate } from '../../src/use-cases/activations';
import { transitionLicense } from '../../src/use-cases/change-license';
import { FakeBus } from '../../../../test/support/fakes/common';
import { licenseSetup, policy } from '../../../../test/support/fakes/license-deps';

// The licence service's cache of the licences it validates: exact through
// license.* events and through its own writes, bypassed while NATS is away,
// bounded in size and age.

async function setup(maxEntries = 100, ttlMs = 60_000, productPolicy = policy()) {
  const s = licenseSetup({ policy: productPolicy });
  const lic = await s.issued();
  const bus = new FakeBus();
  let now = 1_000_000;
  const reads = { count: 0 };
  const findByKey = s.store.findByKey.bind(s.store);
  s.store.findByKey = (key: string) => {
    reads.count++;
    return findByKey(key);
  };
  const cache = new LicenseCache(s.store, bus, maxEntries, ttlMs, undefined, () => now);
  // The use cases write through the cache's outbox, as main.ts wires them.
  const deps = { ...s.deps, outbox: cache.outbox(s.outbox) };
  return { ...s, deps, lic, bus, cache, reads, advance: (ms: number) => (now += ms) };
}

it('reads the store once per key, then answers from memory', async () => {
  const { cache, lic, reads } = await setup();
  const first = await cache.read(lic.key);
  expect(first.doc?._id).toBe(lic._id);
  expect((await cache.read(lic.key)).doc?._id).toBe(lic._id);
  expect(reads.count).toBe(1);
});

it('a change this instance makes is seen by its next read at once (read your writes)', async () => {
  const { cache, deps, lic } = await setup();
  await cache.read(lic.key);
  await transitionLicense(deps, { account_id: 'acct_A', key: lic.key, action: 'suspend' });
  expect((await cache.read(lic.key)).doc?.status).toBe('suspended');
});

it('a change another instance made arrives as its event and evicts', async () => {
  const { cache, bus, lic, reads } = await setup();
  await cache.read(lic.key);
  bus.emit('license.revoked', 'acct_A', { license: { id: lic._id, key: lic.key } });
  await cache.read(lic.key);
  expect(reads.count).toBe(2);
  bus.emit('license.updated', 'acct_A', { license: { id: 'lic_other', key: 'OTHER-KEY' } });
  await cache.read(lic.key);
  expect(reads.count).toBe(2); // another licence's event leaves this one cached
});

it('an audit-only action written through its outbox (an import or export started) evicts nothing', async () => {
  const { cache, lic, reads } = await setup();
  await cache.read(lic.key);
  const outbox = cache.outbox({ flush: async () => undefined });
  const started = newEnvelope('import.created', 'acct_A', { import: { id: 'imp_1', format: 'jsonl' } });
  await outbox.flush(null as never, 'imp_1', [started as unknown as DomainEvent]);
  await cache.read(lic.key);
  expect(reads.count).toBe(1);
});

it('machines activated and deactivated are seen at once when the policy requires activation', async () => {
  const { cache, deps, lic } = await setup(100, 60_000, policy({ require_activation: true }));
  expect((await cache.read(lic.key)).fingerprints).toEqual([]);
  const { activation } = await activate(deps, { account_id: 'acct_A', key: lic.key, fingerprint: 'fp-1', name: '' });
  expect((await cache.read(lic.key)).fingerprints).toEqual(['fp-1']);
  await deactivate(deps, 'acct_A', lic.key, activation._id);
  expect((await cache.read(lic.key)).fingerprints).toEqual([]);
});

it('while NATS is away it reads every time and keeps nothing; what it had is forgotten', async () => {
  const { cache, bus, lic, reads } = await setup();
  await cache.read(lic.key);
  bus.status(false);
  expect(cache.size).toBe(0);
  await cache.read(lic.key);
  await cache.read(lic.key);
  expect(reads.count).toBe(3);
  bus.status(true);
  await cache.read(lic.key);
  await cache.read(lic.key);
  expect(reads.count).toBe(4);
});

it('a read that was in flight when its licence changed is not kept', async () => {
  const { cache, bus, store, lic, reads } = await setup();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const findByKey = store.findByKey;
  store.findByKey = async (key: string) => {
    const doc = await findByKey(key); // read before the change...
    await gate; // ...answered after it
    return doc;
  };
  const inFlight = cache.read(lic.key);
  bus.emit('license.suspended', 'acct_A', { license: { id: lic._id, key: lic.key } });
  open();
  await inFlight;
  store.findByKey = findByKey;
  await cache.read(lic.key);
  expect(reads.count).toBe(2);
});

it('keeps neither unknown keys nor licences with more machines than it lists', async () => {
  const { cache, deps, lic, reads } = await setup(
    100,
    60_000,
    policy({ require_activation: true, max_activations: 1000 }),
  );
  await cache.read('NOT-A-KEY');
  await cache.read('NOT-A-KEY');
  expect(reads.count).toBe(2);
  for (let i = 0; i <= MAX_CACHED_FINGERPRINTS; i++)
    await activate(deps, { account_id: 'acct_A', key: lic.key, fingerprint: `fp-${i}`, name: '' });
  const before = reads.count;
  expect((await cache.read(lic.key)).fingerprints).toHaveLength(MAX_CACHED_FINGERPRINTS + 1);
  await cache.read(lic.key);
  expect(reads.count - before).toBe(2);
});

it('no entry outlives its time to live, the oldest goes first beyond the size, and size 0 turns it off', async () => {
  const { cache, lic, reads, advance } = await setup(1, 1000);
  await cache.read(lic.key);
  advance(1001);
  await cache.read(lic.key);
  expect(reads.count).toBe(2);
  await cache.read('OTHER-KEY');
  await cache.read(lic.key);
  expect(reads.count).toBe(3); // an unknown key took no place
  const off = await setup(0);
  await off.cache.read(off.lic.key);
  await off.cache.read(off.lic.key);
  expect(off.reads.count).toBe(2);
});

it('a read that asks for the store gets it, and its answer says whether it came from memory', async () => {
  const { cache, lic, reads } = await setup();
  expect((await cache.read(lic.key)).rememberedSince).toBeUndefined();
  expect((await cache.read(lic.key)).rememberedSince).toBe(1_000_000);
  const fresh = await cache.read(lic.key, true);
  expect(fresh.rememberedSince).toBeUndefined();
  expect(reads.count).toBe(2);
});
