import { AppError, idempotent, isId, newEvent, newId, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import {
  archivedRefusal,
  withPolicyDefaults,
  type CreateLicenseBatchRequest,
  type DomainEvent,
  type GetProductRequest,
  type LicenseBatch,
  type Product,
} from '@licensing/proto';
import { emailListOf } from '../../domain/erasure';
import type { LicenseCore } from '../../use-cases/license-core';
import { batchCounts, batchRequestOf, checkBatchItems } from '../domain/license-batch';
import type { BatchItemDoc, LicenseBatchDoc, LicenseBatchStore } from '../store/batches';

/** What a licence batch needs. The mails of send_email items are the notification service's: it hears license.batch_completed. */
export interface BatchDeps {
  batches: LicenseBatchStore;
  /** The licence core's table: the batch's licences are issued through it. */
  licenses: Pick<LicenseCore, 'issueBatchLicenses'>;
  /** The product service (through the licence service's product cache): the batch's product and policy. */
  products: { getProduct(req: GetProductRequest): Promise<Product> };
  /** The service's Idempotency-Key records: the same request under one key is the same batch. */
  idempotency: Parameters<typeof idempotent>[0];
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
}

/** A run holds its batch this long without progress; then another instance's sweep resumes it. */
export const BATCH_LEASE_MS = 30_000;
/** Licences written per insert (one unordered write each), and mails queued at once. */
const CHUNK = 100;
/** Tries of an item whose new key collided with an existing one, before it is reported failed. */
const KEY_TRIES = 3;

export const batchScope = (accountId: string) => `${accountId}:license_batch`;

/** A batch as the contract shows it: its items' results (keys of the issued ones), in request order. */
export function toLicenseBatch(doc: LicenseBatchDoc): LicenseBatch {
  return {
    id: doc._id,
    account_id: doc.account_id,
    product_id: doc.product_id,
    status: doc.status,
    total: doc.total,
    issued: doc.issued,
    failed: doc.failed,
    results: doc.items.map((item, index) => ({
      index,
      status: item.status,
      license_id: item.license_id,
      key: item.key ?? '',
      error: item.error ?? '',
      customer_email: item.customer_email,
      send_email: item.send_email,
    })),
    created_at: doc.created_at.toISOString(),
    completed_at: doc.completed_at?.toISOString() ?? '',
  };
}

/**
 * Stores a batch whole, or nothing: every item is checked first (each bad one named by its index), the
 * product must be the account's, and each item gets its licence id now, so the job that issues them
 * (issueBatch) never issues one twice. Under an Idempotency-Key, the same request is the same batch.
 */
export async function createLicenseBatch(
  deps: BatchDeps,
  req: Pick<CreateLicenseBatchRequest, 'account_id' | 'product_id' | 'licenses' | 'idempotency_key'>,
): Promise<LicenseBatchDoc> {
  if (!isId('prod', req.product_id)) throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
  const items = checkBatchItems(
    req.licenses.map((l) => ({
      customer_email: l.customer_email,
      metadata: l.metadata ?? {},
      entitlements: l.entitlements ?? [],
      send_email: l.send_email,
    })),
  );
  // Another account's product is not found, as for one licence; an archived one issues nothing new
  // (a batch stored before it was archived still issues its items: they were accepted then).
  const product = await deps.products.getProduct({ account_id: req.account_id, id: req.product_id });
  const archived = archivedRefusal(product, 'issued');
  if (archived) throw new AppError('conflict', archived);
  const store = async (id: string): Promise<LicenseBatchDoc> => {
    const now = deps.clock.now();
    const doc: LicenseBatchDoc = {
      _id: id,
      account_id: req.account_id,
      product_id: req.product_id,
      status: 'running',
      items: items.map((item) => ({
        ...item,
        license_id: newId('lic', now.getTime()),
        status: 'waiting',
        key: null,
        error: null,
      })),
      total: items.length,
      customer_emails_lc: emailListOf(items),
      issued: 0,
      failed: 0,
      created_at: now,
      completed_at: null,
      lease_until: new Date(now.getTime() + BATCH_LEASE_MS),
    };
    if (await deps.batches.insert(doc)) return doc;
    // An earlier run of the same Idempotency-Key stored it already.
    const earlier = await deps.batches.findInAccount(req.account_id, id);
    if (!earlier) throw new AppError('conflict', 'the batch is being created by another request; retry');
    return earlier;
  };
  if (!req.idempotency_key) return store(newId('lbat', deps.clock.now().getTime()));
  const { id } = await idempotent(
    deps.idempotency,
    batchScope(req.account_id),
    req.idempotency_key,
    batchRequestOf(req.product_id, items),
    async ({ resultId }) => ({ id: (await store(resultId))._id }),
    { now: deps.clock.now(), resultId: () => newId('lbat', deps.clock.now().getTime()) },
  );
  // The batch as it is now (a replay answers its progress, not the first answer's).
  const doc = await deps.batches.findInAccount(req.account_id, id);
  if (!doc) throw AppError.notFound('batch');
  return doc;
}

export async function getLicenseBatch(deps: Pick<BatchDeps, 'batches'>, accountId: string, id: string) {
  const doc = isId('lbat', id) ? await deps.batches.findInAccount(accountId, id) : null;
  if (!doc) throw AppError.notFound('batch');
  return doc;
}

/** One summary per batch: its id is the batch's, so runs that both finish it publish one. */
const batchCompleted = (doc: LicenseBatchDoc): DomainEvent =>
  newEvent(
    'license.batch_completed',
    doc.account_id,
    {
      batch: {
        id: doc._id,
        product_id: doc.product_id,
        total: doc.total,
        issued: doc.issued,
        failed: doc.failed,
        created_at: doc.created_at.toISOString(),
        completed_at: (doc.completed_at ?? new Date()).toISOString(),
      },
    },
    doc.completed_at ?? new Date(),
    `evt_batch_completed_${doc._id.slice(5)}`,
  );

/**
 * Issues a batch's waiting items, CHUNK at a time: one unordered insert of their licences (each with
 * its license.created), under the ids fixed when the batch was stored, so a licence an earlier run
 * (crashed, or running elsewhere at the same time) inserted is found, never issued again; then the
 * progress. When nothing is left, the batch is done with its license.batch_completed (on which the
 * notification service mails the send_email items, once each).
 */
export async function issueBatch(deps: BatchDeps, batch: LicenseBatchDoc, log?: Logger): Promise<LicenseBatchDoc> {
  const { batches, clock, outbox, products, licenses } = deps;
  const doc: LicenseBatchDoc = { ...batch, items: batch.items.map((i) => ({ ...i })) };
  let policy: ReturnType<typeof withPolicyDefaults> | null = null;
  try {
    policy = withPolicyDefaults((await products.getProduct({ account_id: doc.account_id, id: doc.product_id })).policy);
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'not_found')) throw err;
  }
  const tries = new Map<number, number>();
  const save = async () => {
    Object.assign(doc, batchCounts(doc.items));
    await batches.progress(doc, new Date(clock.now().getTime() + BATCH_LEASE_MS));
  };
  for (;;) {
    const pending = indexesOf(doc.items, (i) => i.status === 'waiting').slice(0, CHUNK);
    if (!pending.length) break;
    if (!policy) {
      for (const i of pending) Object.assign(doc.items[i], { status: 'failed', error: 'the product no longer exists' });
      await save();
      continue;
    }
    const keys = await licenses.issueBatchLicenses({
      account_id: doc.account_id,
      product_id: doc.product_id,
      policy,
      items: pending.map((i) => doc.items[i]),
      now: clock.now(),
    });
    for (const i of pending) {
      const key = keys.get(doc.items[i].license_id);
      if (key) Object.assign(doc.items[i], { status: 'issued', key });
      else if ((tries.get(i) ?? 0) + 1 >= KEY_TRIES)
        Object.assign(doc.items[i], { status: 'failed', error: 'no unique key could be made for it' });
      else tries.set(i, (tries.get(i) ?? 0) + 1); // its new key collided: another one next round
    }
    await save();
  }
  doc.completed_at = clock.now();
  doc.status = 'done';
  Object.assign(doc, batchCounts(doc.items));
  const event = batchCompleted(doc);
  await batches.complete(doc, event);
  outbox.flush(batches.model, doc._id, [event]);
  log?.info({ batch: doc._id, issued: doc.issued, failed: doc.failed }, 'licence batch done');
  return doc;
}

function indexesOf(items: BatchItemDoc[], which: (item: BatchItemDoc) => boolean): number[] {
  const out: number[] = [];
  items.forEach((item, i) => {
    if (which(item)) out.push(i);
  });
  return out;
}
