import { AppError } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import { archiving, checkDeletable, unarchiving } from '../../src/domain/product-state';
import { createProduct } from '../../src/use-cases/create-product';
import { archiveProduct, deleteProduct, unarchiveProduct } from '../../src/use-cases/product-states';
import { FakeClock, RecordingOutbox, modelToken, refusal } from '../../../../test/support/fakes/common';
import { FakeProductStore, FakeSigningKeyStore } from '../../../../test/support/fakes/product-stores';
import type { ProductDeletionDoc } from '../../src/store/models';

// A product's states without a store: archived and back on sale (each once: 409 otherwise, with
// product.updated and the audit log's action in the same write, out before the answer), and deleted
// only without releases or licences, the licence service asked before and after the product is
// archived (a licence issued in between refuses the deletion and puts the product back as it was).

describe('the rules', () => {
  const now = new Date('2026-12-07T10:00:00.000Z');

  it('archives a product on sale, and refuses one archived already', () => {
    expect(archiving({ archived_at: null }, now)).toEqual({ archived_at: now });
    expect(archiving({}, now)).toEqual({ archived_at: now });
    expect(() => archiving({ archived_at: now }, now)).toThrow(/archived already/);
  });

  it('unarchives an archived product, and refuses one on sale', () => {
    expect(unarchiving({ archived_at: now })).toEqual({ archived_at: null });
    expect(() => unarchiving({ archived_at: null })).toThrow(/not archived/);
    expect(() => unarchiving({})).toThrow(/not archived/);
  });

  it('deletes only without releases and licences, naming which', () => {
    expect(() => checkDeletable({ releases: false, licences: false })).not.toThrow();
    expect(() => checkDeletable({})).not.toThrow();
    for (const [facts, why] of [
      [{ releases: true }, /has releases/],
      [{ licences: true }, /has licences/],
    ] as const) {
      let thrown: unknown;
      try {
        checkDeletable(facts);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(AppError);
      expect(thrown).toMatchObject({ code: 'conflict', message: expect.stringMatching(why) });
    }
  });
});

/** The deletion records, in memory. */
class FakeDeletions {
  readonly Deletion = modelToken<ProductDeletionDoc>('ProductDeletion');
  readonly docs = new Map<string, ProductDeletionDoc>();
  readonly events: DomainEvent[] = [];

  async insert(doc: Omit<ProductDeletionDoc, 'outbox'>, events: DomainEvent[]): Promise<boolean> {
    if (this.docs.has(doc._id)) return false;
    this.docs.set(doc._id, doc);
    this.events.push(...events);
    return true;
  }
}

async function setup() {
  const store = new FakeProductStore();
  const outbox = new RecordingOutbox();
  const clock = new FakeClock();
  const keys = new FakeSigningKeyStore();
  const deletions = new FakeDeletions();
  /** What the fake licence service answers, question by question (the last one repeats). */
  const answers: boolean[] = [false];
  const asked: string[] = [];
  let releases = false;
  const deps = {
    store,
    outbox,
    clock,
    keys,
    deletions,
    releases: { hasAtLeast: async () => releases },
    licenses: {
      hasLicenses: async ({ product_id }: { account_id: string; product_id: string }) => {
        // What the product was in when the licence service was asked.
        asked.push(store.docs.get(product_id)?.archived_at ? 'archived' : 'on sale');
        return { has_licenses: (answers.length > 1 ? answers.shift() : answers[0]) ?? false };
      },
    },
  };
  const product = await createProduct(deps, {
    account_id: 'acct_A',
    name: 'Editor',
    description: '',
    policy: undefined,
    price: undefined,
  });
  keys.docs.push({
    _id: 'kid_1',
    product_id: product._id,
    account_id: 'acct_A',
    public_key_pem: 'pem',
    private_key_sealed: 'sealed',
    created_at: clock.now(),
  });
  store.events.length = 0;
  outbox.flushed.length = 0;
  const withReleases = (has: boolean) => {
    releases = has;
  };
  const req = { account_id: 'acct_A', id: product._id };
  return { store, outbox, clock, keys, deletions, answers, asked, deps, product, req, withReleases };
}

describe('archiving and unarchiving', () => {
  it('archives at the time of the call, with product.updated and product.archived in the same write, out before the answer', async () => {
    const { store, outbox, clock, deps, req } = await setup();
    clock.advance(60_000);
    const after = await archiveProduct(deps, req);
    expect(after.archived_at).toEqual(clock.now());
    expect(store.docs.get(req.id)!.archived_at).toEqual(clock.now());
    expect(store.events.map((e) => e.type)).toEqual(['product.updated', 'product.archived']);
    expect(store.events[0].data).toMatchObject({ product: { id: req.id, archived_at: clock.now().toISOString() } });
    expect(store.events[1]).toMatchObject({ account_id: 'acct_A', data: { product: { id: req.id, name: 'Editor' } } });
    expect(outbox.flushed).toEqual([{ model: 'Product', id: req.id }]);
  });

  it('refuses to archive twice (409) and writes nothing the second time', async () => {
    const { store, deps, req } = await setup();
    await archiveProduct(deps, req);
    expect(await refusal(() => archiveProduct(deps, req))).toMatchObject({ code: 'conflict' });
    expect(store.events).toHaveLength(2);
  });

  it('unarchives with product.updated and product.unarchived; an active product is 409', async () => {
    const { store, deps, req } = await setup();
    expect(await refusal(() => unarchiveProduct(deps, req))).toMatchObject({ code: 'conflict' });
    await archiveProduct(deps, req);
    const after = await unarchiveProduct(deps, req);
    expect(after.archived_at).toBeNull();
    expect(store.events.map((e) => e.type)).toEqual([
      'product.updated',
      'product.archived',
      'product.updated',
      'product.unarchived',
    ]);
    expect(store.events[2].data).toMatchObject({ product: { archived_at: null } });
  });

  it('is 404 for another account’s product', async () => {
    const { deps, req } = await setup();
    expect(await refusal(() => archiveProduct(deps, { ...req, account_id: 'acct_B' }))).toMatchObject({
      code: 'not_found',
    });
  });

  it('is 409 when another request changed the state between the read and the write', async () => {
    const { store, deps, req } = await setup();
    store.vanishBeforeWrite = true;
    expect(await refusal(() => archiveProduct(deps, req))).toMatchObject({ code: 'conflict' });
  });
});

describe('deleting', () => {
  it('removes a product without licences or releases, with its keys, and records product.deleted', async () => {
    const { store, keys, deletions, outbox, deps, req, asked, product } = await setup();
    const deleted = await deleteProduct(deps, req);
    expect(deleted._id).toBe(product._id);
    expect(store.docs.has(req.id)).toBe(false);
    expect(keys.docs).toEqual([]);
    expect(deletions.events.map((e) => e.type)).toEqual(['product.deleted']);
    // Asked on sale, then again once archived (so nothing could be issued in between unnoticed).
    expect(asked).toEqual(['on sale', 'archived']);
    expect(outbox.flushed).toEqual([
      { model: 'Product', id: req.id },
      { model: 'ProductDeletion', id: req.id },
    ]);
  });

  it('refuses a product with licences (409), changing nothing', async () => {
    const { store, keys, deps, req, answers } = await setup();
    answers.splice(0, answers.length, true);
    expect(await refusal(() => deleteProduct(deps, req))).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/has licences/),
    });
    expect(store.docs.get(req.id)!.archived_at ?? null).toBeNull();
    expect(store.events).toEqual([]);
    expect(keys.docs).toHaveLength(1);
  });

  it('refuses a product with releases (409) before asking about licences', async () => {
    const { deps, req, asked, withReleases } = await setup();
    withReleases(true);
    expect(await refusal(() => deleteProduct(deps, req))).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/has releases/),
    });
    expect(asked).toEqual([]);
  });

  it('a licence issued while it is being deleted refuses the deletion, and the product is back on sale', async () => {
    const { store, deletions, deps, req, answers } = await setup();
    answers.splice(0, answers.length, false, true);
    expect(await refusal(() => deleteProduct(deps, req))).toMatchObject({ code: 'conflict' });
    expect(store.docs.get(req.id)!.archived_at).toBeNull();
    expect(store.events.map((e) => e.type)).toEqual(['product.updated', 'product.updated']);
    expect(deletions.docs.size).toBe(0);
  });

  it('an archived product stays archived when its deletion is refused, and is deleted without being archived again', async () => {
    const { store, deps, req, answers, asked } = await setup();
    await archiveProduct(deps, req);
    answers.splice(0, answers.length, false, true);
    await refusal(() => deleteProduct(deps, req));
    expect(store.docs.get(req.id)!.archived_at).toBeTruthy();
    answers.splice(0, answers.length, false);
    store.events.length = 0;
    asked.length = 0;
    await deleteProduct(deps, req);
    expect(store.events).toEqual([]);
    expect(asked).toEqual(['archived', 'archived']);
  });

  it('finishes a deletion cut short without a second product.deleted', async () => {
    const { store, deletions, deps, req, product } = await setup();
    await deletions.insert({ _id: req.id, account_id: 'acct_A', created_at: product.created_at }, []);
    await deleteProduct(deps, req);
    expect(store.docs.has(req.id)).toBe(false);
    expect(deletions.events).toEqual([]);
  });
});
