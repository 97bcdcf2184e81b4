import type { DomainEvent } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import type { LicenseRecord } from '../../src/domain/license';
import { batchCounts, checkBatchItems } from '../../src/transfer/domain/license-batch';
import type { LicenseBatchDoc, LicenseBatchStore } from '../../src/transfer/store/batches';
import { issueBatch, type BatchDeps } from '../../src/transfer/use-cases/license-batches';
import { licenseCore, type LicenseCoreDeps } from '../../src/use-cases/license-core';
import { licenseSetup, PRODUCT_ID } from '../../../../test/support/fakes/license-deps';

const item = (customer_email: string, over = {}) => ({
  customer_email,
  metadata: {},
  entitlements: [],
  send_email: false,
  ...over,
});

const problemsOf = (items: ReturnType<typeof item>[]) => {
  try {
    checkBatchItems(items);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return (err as AppError).fieldErrors.map((e) => e.field);
  }
  throw new Error('accepted');
};

describe('checking a batch (transfer/domain/license-batch.ts)', () => {
  it('takes 1 to 1,000 items, trimming e-mails', () => {
    expect(checkBatchItems([item(' a@example.com ')])[0].customer_email).toBe('a@example.com');
    expect(checkBatchItems(Array.from({ length: 1000 }, (_, i) => item(`u${i}@example.com`)))).toHaveLength(1000);
  });

  it('refuses none, 1,001, and names every bad item by its index and field', () => {
    expect(problemsOf([])).toEqual(['licenses']);
    expect(problemsOf(Array.from({ length: 1001 }, (_, i) => item(`u${i}@example.com`)))).toEqual(['licenses']);
    expect(
      problemsOf([
        item('ok@example.com'),
        item('nope'),
        item('x@example.com', { metadata: { 'a b': 'x' } }),
        item('y@example.com', { entitlements: ['BAD CODE'] }),
        item('z@example.com', { send_email: true }),
      ]),
    ).toEqual(['licenses[1].customer_email', 'licenses[2].metadata.a b', 'licenses[3].entitlements[0]']);
  });

  it('counts issued, failed and waiting items', () => {
    expect(
      batchCounts([{ status: 'issued' }, { status: 'failed' }, { status: 'waiting' }, { status: 'issued' }]),
    ).toEqual({ issued: 2, failed: 1, waiting: 1 });
  });
});

/** license_batches and the licences' unordered insert in memory, over the fake licence store. */
class FakeBatches {
  /** The licence models the core's table publishes licence events on (the fake store's). */
  models: unknown;
  readonly batches = new Map<string, LicenseBatchDoc>();
  /** Throws in the next progress write (a crash after a chunk's licences were written). */
  crashAtProgress = false;
  completed: DomainEvent[] = [];
  constructor(private readonly licenses: Map<string, LicenseRecord>) {}
  readonly model = { modelName: 'LicenseBatch' };
  async progress(doc: LicenseBatchDoc) {
    if (this.crashAtProgress) {
      this.crashAtProgress = false;
      throw new Error('crashed');
    }
    this.batches.set(doc._id, structuredClone(doc));
  }
  async complete(doc: LicenseBatchDoc, event: DomainEvent) {
    this.batches.set(doc._id, structuredClone(doc));
    this.completed.push(event);
  }
  async insertLicenses(rows: { doc: LicenseRecord }[]) {
    const inserted = new Set<string>();
    for (const { doc } of rows) {
      if (this.licenses.has(doc._id)) continue; // an earlier run's: a duplicate _id
      this.licenses.set(doc._id, structuredClone(doc));
      inserted.add(doc._id);
    }
    return inserted;
  }
  async keysOf(ids: string[]) {
    return new Map(ids.filter((id) => this.licenses.has(id)).map((id) => [id, this.licenses.get(id)!.key]));
  }
}

/** A batch's dependencies: the licence core's table over the fake licence store and the fake batches. */
function batchDeps(setup: ReturnType<typeof licenseSetup>, batches: FakeBatches): BatchDeps {
  const { deps, store } = setup;
  batches.models = store.models;
  return {
    batches: batches as unknown as LicenseBatchStore,
    licenses: licenseCore({ bulk: batches as unknown as LicenseCoreDeps['bulk'], outbox: deps.outbox }),
    products: deps.products,
    idempotency: store.idempotency as unknown as BatchDeps['idempotency'],
    outbox: deps.outbox,
    clock: deps.clock,
  };
}

describe('issuing a batch (transfer/use-cases/license-batches.ts issueBatch)', () => {
  const batchOf = (n: number): LicenseBatchDoc => ({
    _id: 'lbat_01HZZZZZZZZZZZZZZZZZZZZZZZ',
    account_id: 'acct_A',
    product_id: PRODUCT_ID,
    status: 'running',
    items: Array.from({ length: n }, (_, i) => ({
      ...item(`u${i}@example.com`, i === 0 ? { metadata: { order: '7' }, entitlements: ['pro'] } : {}),
      license_id: `lic_01HZZZZZZZZZZZZZZZZZZZZ${String(i).padStart(3, '0')}`,
      status: 'waiting' as const,
      key: null,
      error: null,
    })),
    total: n,
    issued: 0,
    failed: 0,
    created_at: new Date(0),
    completed_at: null,
    lease_until: new Date(0),
  });

  it('issues every item under its fixed id, with its metadata and entitlements, then one license.batch_completed', async () => {
    const setup = licenseSetup();
    const { store } = setup;
    const batches = new FakeBatches(store.licenses as unknown as Map<string, LicenseRecord>);
    const done = await issueBatch(batchDeps(setup, batches), batchOf(3));
    expect(done).toMatchObject({ status: 'done', issued: 3, failed: 0 });
    expect(store.licenses.size).toBe(3);
    const first = store.licenses.get(done.items[0].license_id)!;
    expect(first).toMatchObject({ metadata: { order: '7' }, extra_entitlements: ['pro'], key: done.items[0].key });
    expect(batches.completed.map((e) => [e.type, e.id])).toEqual([
      ['license.batch_completed', 'evt_batch_completed_01HZZZZZZZZZZZZZZZZZZZZZZZ'],
    ]);
  });

  it('a run after a crash mid-batch issues only what is left: no item twice', async () => {
    const setup = licenseSetup();
    const { store } = setup;
    const batches = new FakeBatches(store.licenses as unknown as Map<string, LicenseRecord>);
    const bd = batchDeps(setup, batches);
    const batch = batchOf(250);
    batches.crashAtProgress = true; // the first 100 licences are written, the progress is not
    await expect(issueBatch(bd, batch)).rejects.toThrow('crashed');
    expect(store.licenses.size).toBe(100);
    const keysBefore = new Map([...store.licenses.values()].map((l) => [l._id, l.key]));
    // Resumed from the batch as stored (every item still waiting).
    const done = await issueBatch(bd, batch);
    expect(done).toMatchObject({ status: 'done', issued: 250 });
    expect(store.licenses.size).toBe(250);
    // The licences of the first run kept their keys, and the batch reports those.
    for (const it of done.items.slice(0, 100)) expect(it.key).toBe(keysBefore.get(it.license_id));
    expect(new Set(done.items.map((i) => i.key)).size).toBe(250);
  });
});
