import type { Model } from 'mongoose';
import type {
  DomainEvent,
  EventOf,
  EventPattern,
  EventsMatching,
  EventType,
  PageInfo,
  PageRequest,
} from '@licensing/proto';
import type { Clock, Outbox } from '@licensing/runtime';

// Unit tests only: small stand-ins for what the use cases reach at their edges.

/** A clock that moves only when told to. */
export class FakeClock implements Clock {
  private at: Date;

  constructor(start = '2026-03-01T12:00:00.000Z') {
    this.at = new Date(start);
  }

  now(): Date {
    return new Date(this.at.getTime());
  }

  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

/** Stands for a mongoose model where only its identity matters (the outbox is told which collection to publish from). */
export const modelToken = <T>(modelName: string): Model<T> => ({ modelName }) as unknown as Model<T>;

/** The event sink: records which documents' recorded events were handed over for publishing. */
export class RecordingOutbox implements Pick<Outbox, 'flush'> {
  readonly flushed: { model: string; id: string }[] = [];

  flush(model: Model<any>, id: string): Promise<void> {
    this.flushed.push({ model: model.modelName, id });
    return Promise.resolve();
  }
}

/** The same paging as the runtime's listPage: newest id first, cursor = last id of the page before. */
export function pageOf<T extends { _id: string }>(
  rows: T[],
  page: PageRequest | undefined,
): { items: T[]; page: PageInfo } {
  const limit = Math.min(Math.max(page?.limit || 20, 1), 100);
  const sorted = rows
    .filter((r) => !page?.starting_after || r._id < page.starting_after)
    .sort((a, b) => (a._id < b._id ? 1 : -1));
  const items = sorted.slice(0, limit);
  const hasMore = sorted.length > limit;
  return {
    items: items.map((r) => structuredClone(r)),
    page: { has_more: hasMore, next_cursor: hasMore ? items[items.length - 1]._id : '' },
  };
}

/** What a unique index answers to a second insert. */
export const duplicateKey = () => Object.assign(new Error('E11000 duplicate key'), { code: 11000 });

/** Runs `fn` and returns the AppError-like value it threw (fails the test if it did not throw). */
export async function refusal(
  fn: () => Promise<unknown>,
): Promise<{ code: string; message: string; fieldErrors: { field: string; message: string }[] }> {
  try {
    await fn();
  } catch (err) {
    return err as { code: string; message: string; fieldErrors: { field: string; message: string }[] };
  }
  throw new Error('expected a refusal, but the call succeeded');
}

/** The event bus as a cache sees it: subscriptions called at once, and a connection that can drop. */
export class FakeBus {
  connected = true;
  private readonly handlers = new Map<string, Array<(e: DomainEvent) => void>>();
  private readonly listeners: Array<(connected: boolean) => void> = [];

  subscribe<T extends EventType>(type: T, handler: (e: DomainEvent<T>) => void): void {
    this.handlers.set(type, [...(this.handlers.get(type) ?? []), handler as (e: DomainEvent) => void]);
  }

  /** As EventBus.follow: the types (`license.>` for a family) reach the handler; in sync while connected. */
  follow<P extends EventPattern>(types: P[], handler: (e: EventOf<EventsMatching<P>>) => void): this {
    this.followers.push({ types, handler: handler as (e: DomainEvent) => void });
    return this;
  }
  private readonly followers: Array<{ types: string[]; handler: (e: DomainEvent) => void }> = [];

  onStatus(listener: (connected: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Delivers an event of this type to its subscribers. */
  emit(type: string, accountId: string, data: unknown): void {
    const event = { id: 'evt_1', type, account_id: accountId, created_at: new Date().toISOString(), data };
    for (const h of this.handlers.get(type) ?? []) h(event as unknown as DomainEvent);
    for (const f of this.followers)
      if (f.types.some((t) => t === type || (t.endsWith('.>') && type.startsWith(t.slice(0, -1)))))
        f.handler(event as unknown as DomainEvent);
  }

  status(connected: boolean): void {
    this.connected = connected;
    for (const l of this.listeners) l(connected);
  }
}
