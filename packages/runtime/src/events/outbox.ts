import type { Model } from 'mongoose';
import type { DomainEvent } from '@licensing/proto';
import type { EventBus } from './bus';
import type { Logger } from '../observability/logger';
import { PeriodicTask } from '../tasks/periodic';
import { postgresPagesOf } from '../store/postgres';
import { outsideAnyCall } from '../core/request-scope';

/**
 * Transactional outbox without transactions. FerretDB has no multi-document
 * transactions, so an entity's pending events are written in the same document
 * write as the change itself, under `outbox.<eventId>`, with `outbox_pending`
 * set. After the write the service publishes at once; the relay publishes again
 * whatever is still pending (NATS down, crash) until JetStream acks it. The
 * event id is the Nats-Msg-Id, so publishing twice never duplicates.
 *
 * Only the relay clears published events from a document, and only once they
 * are SETTLE_MS old: a process remembers the documents it published (with the
 * event ids) and clears those due in batches, one write per batch, without reading the collection.
 * The full scan of pending documents is only the safety net (events whose
 * publish failed, or of a process that died): every idle interval, or every
 * interval while it finds work of its own. Its cost follows the pending
 * documents, never the collection, and a sustained write rate no longer makes
 * it re-read every settling document each second. FerretDB 1.x applies updates as read-modify-write without
 * isolation (measured: 100 concurrent $inc on one document keep 25), so a
 * clearing update that raced with the service's next change to the same
 * document could undo that change, and drop the event stored with it. So the
 * clearing goes around FerretDB's update over PostgreSQL (one atomic SQL
 * statement per batch, each document under its own condition, postgres/outbox-clear.ts) and is conditional elsewhere (atomic
 * on MongoDB); clearing late also keeps it away from the writes that follow a change.
 */
export const SETTLE_MS = 5000;

/** Fields to add to every mongoose schema whose writes emit events. */
export const outboxFields = {
  outbox: { type: Object, default: undefined },
  outbox_pending: { type: Boolean, default: undefined },
};

/** The update fragment that records events in the same write as the change. */
export function withEvents(events: DomainEvent[]): Record<string, unknown> {
  const set: Record<string, unknown> = { outbox_pending: true };
  for (const e of events) set[`outbox.${e.id}`] = e;
  return set;
}

/** For inserts: the fields a new document carries so its events go out with it. */
export function outboxOf(events: DomainEvent[]): { outbox: Record<string, DomainEvent>; outbox_pending: true } {
  return { outbox: Object.fromEntries(events.map((e) => [e.id, e])), outbox_pending: true };
}

interface OutboxDoc {
  _id: string;
  outbox?: Record<string, DomainEvent>;
}

/** A document's published events, to be cleared from it. */
interface Published {
  id: string;
  events: DomainEvent[];
}

/** A document whose events this process published, to be cleared of them once they are settled. */
interface Settling {
  model: AnyModel;
  id: string;
  /** By id, in the order they were written. */
  events: Map<string, DomainEvent>;
  /** Epoch ms when the newest of those events is SETTLE_MS old. */
  due: number;
}

/** How many acked event ids a process remembers, so the relay does not publish them again. */
const REMEMBERED = 20_000;
/** How many published documents a process remembers to clear; beyond, the oldest are left to the scan. */
const MAX_SETTLING = 50_000;
/** Documents per relay query (published together), and the most queries one pass makes before yielding. */
const BATCH = 200;
const MAX_BATCHES_PER_PASS = 20;
/** Pending documents the scan reads at once, by _id, over FerretDB's PostgreSQL. */
const READS_AT_ONCE = 20;
/** Documents cleared by one write. */
const CLEAR_BATCH = 500;
/** Documents cleared by one bulk write where there is no PostgreSQL statement (two updates each). */
const BULK_DOCS = 16;

// biome-ignore lint/suspicious/noExplicitAny: the relay serves models of every document type alike
type AnyModel = Model<any>;

const keyOf = (model: AnyModel, id: string) => `${model.collection.collectionName}\u0000${id}`;

export class Outbox {
  private readonly models: AnyModel[] = [];
  private readonly acked = new Set<string>();
  private readonly flushing = new Set<Promise<void>>();
  /** By collection and id, in the order they were published (so the oldest are due first). */
  private readonly settling = new Map<string, Settling>();
  private task?: PeriodicTask;

  /** The last scan found documents of its own to publish, or a publish failed: scan again within intervalMs. */
  private busy = true;
  private lastScan = 0;

  constructor(
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly intervalMs = 1000,
    private readonly settleMs = SETTLE_MS,
    /** With nothing pending the relay only makes sure of that this often: events normally go out at once after their write. */
    private readonly idleIntervalMs = Math.max(intervalMs, 10_000),
  ) {
    // Events written while NATS was away go out as soon as it is back.
    bus.onStatus((connected) => {
      if (connected) this.wake();
    });
  }

  /** Something may be pending: look within intervalMs. */
  private wake(): void {
    this.busy = true;
    this.task?.soon(this.intervalMs);
  }

  /** Relays this model's events; declares the index the relay's query needs (created with the others at start). */
  track(model: AnyModel): void {
    model.schema.index({ outbox_pending: 1, _id: 1 });
    this.models.push(model);
  }

  /**
   * Publishes the pending events of one document now, without writing to it; failures are left for
   * the relay. `events`: the ones the write just stored (saves reading them back); else all pending.
   * The promise (never rejected) settles once they are published or left for the relay: a caller
   * that must have its event out before it answers (read-your-writes elsewhere) awaits it.
   * Concurrent flushes are in flight together: their publishes leave in one socket write (bus.ts).
   */
  flush(model: AnyModel, id: string, events?: DomainEvent[]): Promise<void> {
    // Outlives the call that wrote the document: not bound by that call's deadline.
    const flushing = outsideAnyCall(async () => {
      const doc = events
        ? { _id: id, outbox: Object.fromEntries(events.map((e) => [e.id, e])) }
        : ((await model.findById(id, { outbox: 1 }).lean()) as OutboxDoc | null);
      if (!doc?.outbox) return;
      const published = await this.publishDoc(doc);
      if (published.length) this.settle(model, id, published, Math.max(...published.map((e) => this.settledAt(e))));
    }).catch((err) => {
      this.log.debug({ err, id }, 'outbox flush deferred');
      this.settling.delete(keyOf(model, id)); // the scan publishes it
      this.wake();
    });
    this.flushing.add(flushing);
    void flushing.finally(() => this.flushing.delete(flushing));
    return flushing;
  }

  private settledAt(e: DomainEvent): number {
    return Date.parse(e.created_at) + this.settleMs;
  }

  /**
   * Publishes a document's events in the order they were written, each once JetStream acked the one
   * before (so a failure never lets a later event of the document out before it); other documents'
   * publishes are in flight meanwhile. Returns them all, in that order.
   */
  private async publishDoc(doc: OutboxDoc): Promise<DomainEvent[]> {
    const events = Object.values(doc.outbox ?? {}).sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const event of events) {
      if (this.acked.has(event.id)) continue; // this process already got JetStream's ack
      await this.bus.publish(event);
      this.remember(event.id);
    }
    return events;
  }

  /** Remembers to clear these published events from the document once they are settled. */
  private settle(model: AnyModel, id: string, events: DomainEvent[], due: number): void {
    const key = keyOf(model, id);
    const entry = this.settling.get(key);
    this.settling.delete(key); // re-inserted last: the map stays in publishing order
    this.settling.set(key, {
      model,
      id,
      events: new Map([...(entry?.events ?? []), ...events.map((e) => [e.id, e] as const)]),
      due: Math.max(due, entry?.due ?? 0),
    });
    if (this.settling.size > MAX_SETTLING) this.settling.delete(this.settling.keys().next().value!);
    this.task?.soon(Math.max(0, due - Date.now()));
  }

  /**
   * Removes published events from a batch of documents, and a document's pending flag once none is
   * left, never an event (or a change) written meanwhile: one write for the batch. Over FerretDB's
   * PostgreSQL: one atomic statement that clears each document only when it holds exactly its events
   * (postgres/outbox-clear.ts; one holding others too waits for a later pass, when they are settled as
   * well). Elsewhere: one ordered bulk write of two conditional updates per document, each atomic on
   * MongoDB: its events' keys, then the flag and the outbox only if the outbox is still empty (an
   * event added between the two keeps both).
   */
  private async clear(model: AnyModel, docs: Published[]): Promise<void> {
    if (docs.length === 0) return;
    const postgres = postgresPagesOf(model.db);
    if (postgres) {
      await postgres.clearOutboxes(
        model.collection.collectionName,
        docs.map((d) => ({ id: d.id, eventIds: d.events.map((e) => e.id) })),
      );
      return;
    }
    // Small bulk writes: FerretDB 1.24 stalls on an update command of many statements (measured: 40
    // statements in 0.14 s, 80 unfinished after 2 min), and this path serves it too (over SQLite).
    for (let i = 0; i < docs.length; i += BULK_DOCS) await this.clearBulk(model, docs.slice(i, i + BULK_DOCS));
  }

  private async clearBulk(model: AnyModel, docs: Published[]): Promise<void> {
    await model.bulkWrite(
      docs.flatMap((d) => [
        {
          updateOne: {
            filter: { _id: d.id },
            update: { $unset: Object.fromEntries(d.events.map((e) => [`outbox.${e.id}`, ''])) },
          },
        },
        { updateOne: { filter: { _id: d.id, outbox: {} }, update: { $unset: { outbox_pending: '', outbox: '' } } } },
      ]),
      { ordered: true },
    );
  }

  /**
   * Clears the remembered documents that are due, a batch per write; a batch that fails is left to
   * the scan. Exposed for tests.
   */
  async clearDue(): Promise<void> {
    const now = Date.now();
    const due = new Map<AnyModel, Published[]>();
    for (const [key, entry] of this.settling) {
      if (entry.due > now) continue;
      this.settling.delete(key);
      const docs = due.get(entry.model) ?? [];
      docs.push({ id: entry.id, events: [...entry.events.values()] });
      due.set(entry.model, docs);
    }
    for (const [model, docs] of due)
      for (let i = 0; i < docs.length; i += CLEAR_BATCH)
        await this.clear(model, docs.slice(i, i + CLEAR_BATCH)).catch((err) => {
          this.log.debug({ err, documents: Math.min(CLEAR_BATCH, docs.length - i) }, 'outbox clear deferred');
          this.busy = true;
        });
  }

  private remember(id: string): void {
    this.acked.add(id);
    if (this.acked.size > REMEMBERED) this.acked.delete(this.acked.values().next().value!);
  }

  /**
   * One query's worth of a model's pending documents after `after` (by _id), but those this process
   * published and waits to clear. Over FerretDB's PostgreSQL the ids come from the partial index of
   * pending documents (postgres/outbox-clear.ts): FerretDB would fetch and sort every pending document
   * for each query. Only the documents to publish are then read, by _id.
   */
  private async pending(model: AnyModel, after: string): Promise<{ docs: OutboxDoc[]; next?: string }> {
    const mine = (id: string) => this.settling.has(keyOf(model, id));
    const postgres = postgresPagesOf(model.db);
    if (postgres) {
      const ids = await postgres.pendingIds(model.collection.collectionName, after, BATCH);
      const todo = ids.filter((id) => !mine(id));
      const read: (OutboxDoc | null)[] = [];
      // A few reads at a time: the store serves the services' calls meanwhile.
      for (let i = 0; i < todo.length; i += READS_AT_ONCE)
        read.push(
          ...(await Promise.all(
            todo
              .slice(i, i + READS_AT_ONCE)
              .map((id) => model.findById(id, { outbox: 1 }).lean() as Promise<OutboxDoc | null>),
          )),
        );
      return {
        docs: read.filter((d): d is OutboxDoc => !!d?.outbox),
        next: ids.length === BATCH ? ids.at(-1) : undefined,
      };
    }
    const filter = after ? { outbox_pending: true, _id: { $gt: after } } : { outbox_pending: true };
    const found = (await model.find(filter, { outbox: 1 }).sort({ _id: 1 }).limit(BATCH).lean()) as OutboxDoc[];
    return {
      docs: found.filter((d) => d.outbox && !mine(d._id)),
      next: found.length === BATCH ? found[found.length - 1]._id : undefined,
    };
  }

  /**
   * The scan: every tracked collection's pending documents, oldest first, but those this process
   * published and waits to clear. A query's documents are published together (each in its own
   * order), and those settled cleared with one write. A failed publish ends the pass once the rest of
   * its batch is done: its events stay pending for the next. Returns how many documents it published.
   * Exposed for tests.
   */
  async sweep(): Promise<number> {
    let seen = 0;
    this.lastScan = Date.now();
    for (const model of this.models) {
      let after = '';
      for (let batch = 0; batch < MAX_BATCHES_PER_PASS; batch++) {
        const { docs, next } = await this.pending(model, after);
        const results = await Promise.allSettled(docs.map((doc) => this.publishDoc(doc)));
        const now = Date.now();
        const settled: Published[] = [];
        let failed: { reason: unknown } | undefined;
        results.forEach((result, i) => {
          if (result.status === 'rejected') {
            failed ??= result;
            return;
          }
          seen++;
          const events = result.value;
          const ready = events.filter((e) => this.settledAt(e) <= now);
          if (ready.length) settled.push({ id: docs[i]._id, events: ready });
          const later = events.filter((e) => this.settledAt(e) > now);
          if (later.length) this.settle(model, docs[i]._id, later, Math.max(...later.map((e) => this.settledAt(e))));
        });
        for (let i = 0; i < settled.length; i += CLEAR_BATCH)
          await this.clear(model, settled.slice(i, i + CLEAR_BATCH));
        if (failed) {
          this.busy = true;
          throw failed.reason;
        }
        if (!next) break;
        after = next;
      }
    }
    this.busy = seen > 0;
    return seen;
  }

  /** One relay pass: clear what is due, and scan when there is reason to (or the idle interval has passed). */
  private async pass(): Promise<void> {
    await this.clearDue();
    if (this.busy || Date.now() - this.lastScan >= this.idleIntervalMs) await this.sweep();
  }

  /** Number of documents still holding unpublished events (for status and metrics). */
  async backlog(): Promise<number> {
    let n = 0;
    for (const model of this.models) {
      // Over FerretDB's PostgreSQL, counted from the partial index of pending documents.
      const counted = await postgresPagesOf(model.db)?.count(model.collection.collectionName, { outbox_pending: true });
      n += counted ?? (await model.countDocuments({ outbox_pending: true }));
    }
    return n;
  }

  /**
   * Seconds since the oldest event still held in a document was written (0 when none): how long
   * events have waited for JetStream. Published events stay until they are cleared (SETTLE_MS and
   * the next pass), so a few seconds is normal; minutes mean NATS is away or refusing. Each call
   * (a scrape) reads at most as many documents as one relay pass, per collection: past that many
   * pending ones it is a lower bound, and the backlog (counted in full) tells the rest.
   */
  async oldestPendingAgeS(nowMs = Date.now()): Promise<number> {
    let oldest = nowMs;
    for (const model of this.models) {
      const docs = model.find({ outbox_pending: true }, { outbox: 1 }).limit(BATCH * MAX_BATCHES_PER_PASS);
      for await (const doc of docs.lean().cursor() as AsyncIterable<OutboxDoc>)
        for (const event of Object.values(doc.outbox ?? {})) {
          const at = Date.parse(event.created_at);
          if (at < oldest) oldest = at;
        }
    }
    return Math.max(0, (nowMs - oldest) / 1000);
  }

  start(): void {
    this.task = new PeriodicTask(
      'outbox relay',
      () => this.pass(),
      () => (this.busy || this.settling.size > 0 ? this.intervalMs : this.idleIntervalMs),
      this.log,
    );
    this.task.start();
  }

  /**
   * Stops the relay after the flushes in flight and one last pass, so events of
   * the calls that finished during shutdown go out now rather than at the next
   * start. Whatever still fails stays in its document for the next relay.
   */
  async stop(): Promise<void> {
    await this.task?.stop();
    await Promise.all([...this.flushing]);
    if (this.bus.connected)
      await this.clearDue()
        .then(() => this.sweep())
        .catch((err) => this.log.warn({ err }, 'last outbox pass failed; the next start publishes the rest'));
  }
}
