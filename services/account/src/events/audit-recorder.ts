import type { DomainEvent } from '@licensing/proto';
import { ACCOUNT_AUDIT_CONSUMER, DurableBatches, type EventBus, type Logger } from '@licensing/runtime';
import { auditEntryOf, type AuditEntryFields } from '../domain/audit';
import type { AuditStore } from '../store/audit';

/** Most events written to the log in one insert. */
export const AUDIT_BATCH = 100;

/** The names of API keys by id (the account service's own keys): an entry names the key that acted. */
export type KeyNames = (ids: string[]) => Promise<Map<string, string>>;

/**
 * Writes the audit log from the event stream: every event of every service, through a durable consumer
 * of its own, becomes one entry, written before the event is acknowledged. So recording never blocks
 * nor fails the change it records (the change is done, and its event is in its service's outbox), and
 * never loses one (an entry not written is an event redelivered; written twice, it is one entry).
 */
export class AuditRecorder {
  private readonly consumer: DurableBatches;

  constructor(
    bus: EventBus,
    stream: string,
    private readonly store: Pick<AuditStore, 'record'>,
    private readonly keyNames: KeyNames,
    log: Logger,
  ) {
    this.consumer = new DurableBatches(bus, {
      name: ACCOUNT_AUDIT_CONSUMER,
      stream,
      batch: AUDIT_BATCH,
      handle: (events) => this.record(events),
      log,
    });
  }

  start(): Promise<void> {
    return this.consumer.start();
  }

  stop(): Promise<void> {
    return this.consumer.stop();
  }

  /** The entries of these events, each API key that acted named by its name. */
  async record(events: DomainEvent[]): Promise<void> {
    const entries = events.map(auditEntryOf);
    await this.store.record(await this.named(entries));
  }

  private async named(entries: AuditEntryFields[]): Promise<AuditEntryFields[]> {
    const unnamed = [
      ...new Set(entries.filter((e) => e.actor.type === 'api_key' && !e.actor.name).map((e) => e.actor.id)),
    ];
    if (!unnamed.length) return entries;
    const names = await this.keyNames(unnamed);
    return entries.map((e) =>
      e.actor.type === 'api_key' && !e.actor.name && names.get(e.actor.id)
        ? { ...e, actor: { ...e.actor, name: names.get(e.actor.id) } }
        : e,
    );
  }
}
