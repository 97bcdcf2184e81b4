import type { Model } from 'mongoose';
import type { DomainEvent } from '@licensing/proto';
import type { EventBus } from './bus';
import type { Logger } from './logger';
import { PeriodicTask } from './periodic';
import { outsideAnyCall } from './request-scope';

/**
 * Transactional outbox without transactions. FerretDB has no multi-document
 * transactions, so an entity's pending events are written in the same document
 * write as the change itself, under `outbox.<eventId>`, with `outbox_pending`
 * set. After the write the service publishes at once; the relay publishes again
 * whatever is still pending (NATS down, crash) until JetStream acks it. The
 * event id is the Nats-Msg-Id, so publishing twice never duplicates.
 *
 * Only the relay clears published events from a document, and only once they
 * are SETTLE_MS old. FerretDB 1.x applies updates as read-modify-write without
 * isolation (measured: 100 concurrent $inc on one document keep 25), so a
 * clearing write that raced with the service's next change to the same
 * document could undo that change. Clearing late keeps it away from the
 * writes that follow a change; MongoDB itself updates a document atomically.
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

/** How many acked event ids a process remembers, so the relay does not publish them again. */
const REMEMBERED = 20_000;
/** Documents per relay query, and the most queries one pass makes before yielding. */
const BATCH = 200;
const MAX_BATCHES_PER_PASS = 20;

// biome-ignore lint/suspicious/noExplicitAny: the relay serves models of every document type alike
type AnyModel = Model<any>;

export class Outbox {
  private readonly models: AnyModel[] = [];
  private readonly acked = new Set<string>();
  private readonly flushing = new Set<Promise<void>>();
  private task?: PeriodicTask;

  /** When the last pass found work, or a publish failed: until then the relay runs every intervalMs, else every idleIntervalMs. */
  private busy = true;

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

  /** Publishes the pending events of one document now, without writing to it; failures are left for the relay. */
  flush(model: AnyModel, id: string): void {
    // Outlives the call that wrote the document: not bound by that call's deadline.
    const flushing = outsideAnyCall(() => this.publishDoc(model, id, undefined, false)).catch((err) => {
      this.log.debug({ err, id }, 'outbox flush deferred');
      this.wake();
    });
    this.flushing.add(flushing);
    void flushing.finally(() => this.flushing.delete(flushing));
  }

  private async publishDoc(model: AnyModel, id: string, known: OutboxDoc | undefined, clear: boolean): Promise<void> {
    const doc = known ?? ((await model.findById(id, { outbox: 1 }).lean()) as OutboxDoc | null);
    if (!doc?.outbox) return;
    const events = Object.values(doc.outbox).sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const event of events) {
      if (this.acked.has(event.id)) continue; // this process already got JetStream's ack
      await this.bus.publish(event);
      this.remember(event.id);
    }
    if (!clear) return;
    const settled = events.filter((e) => Date.now() - Date.parse(e.created_at) >= this.settleMs);
    if (!settled.length) return;
    await model.updateOne({ _id: id }, { $unset: Object.fromEntries(settled.map((e) => [`outbox.${e.id}`, ''])) });
    if (settled.length === events.length) {
      // Clear the flag only if nothing new was added meanwhile.
      const left = (await model.findById(id, { outbox: 1 }).lean()) as OutboxDoc | null;
      if (left && (!left.outbox || Object.keys(left.outbox).length === 0)) {
        await model.updateOne({ _id: id, outbox_pending: true }, { $unset: { outbox_pending: '', outbox: '' } });
      }
    }
  }

  private remember(id: string): void {
    this.acked.add(id);
    if (this.acked.size > REMEMBERED) this.acked.delete(this.acked.values().next().value!);
  }

  /** One pass over every tracked collection, oldest documents first. Exposed for tests. */
  async sweep(): Promise<number> {
    let seen = 0;
    for (const model of this.models) {
      let after = '';
      for (let batch = 0; batch < MAX_BATCHES_PER_PASS; batch++) {
        const filter = after ? { outbox_pending: true, _id: { $gt: after } } : { outbox_pending: true };
        const docs = (await model.find(filter, { outbox: 1 }).sort({ _id: 1 }).limit(BATCH).lean()) as OutboxDoc[];
        for (const doc of docs) await this.publishDoc(model, doc._id, doc, true);
        seen += docs.length;
        if (docs.length < BATCH) break;
        after = docs[docs.length - 1]._id;
      }
    }
    this.busy = seen > 0;
    return seen;
  }

  /** Number of documents still holding unpublished events (for status and metrics). */
  async backlog(): Promise<number> {
    let n = 0;
    for (const model of this.models) n += await model.countDocuments({ outbox_pending: true });
    return n;
  }

  start(): void {
    this.task = new PeriodicTask(
      'outbox relay',
      () => this.sweep(),
      () => (this.busy ? this.intervalMs : this.idleIntervalMs),
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
      await this.sweep().catch((err) =>
        this.log.warn({ err }, 'last outbox pass failed; the next start publishes the rest'),
      );
  }
}
