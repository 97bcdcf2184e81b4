import { appliedBefore, PeriodicTask, type Logger } from '@licensing/runtime';
import { addCodes, hourOf, type CodeCounts, type HourBucket } from '../domain/stats';
import {
  hourCountId,
  recentGroupId,
  type HourCount,
  type LastValidation,
  type RecentGroup,
  type ValidationStatsStore,
} from '../store/stats';

/**
 * At most this many entries wait in each of the counter's maps between two flushes (and at most this
 * many machines in all): validations naming ever new licences or machines (random fingerprints, say)
 * cannot grow the licence service's memory without bound. Past it a new entry is dropped and counted
 * (licensing_validation_telemetry_dropped_total); entries already held still count.
 */
export const MAX_PENDING_ENTRIES = 20_000;

/** What the counter dropped: the map it did not fit in. */
export type DroppedTelemetry = 'hour' | 'last_validated' | 'recent' | 'seen';

/**
 * Counts validations and remembers when each licence was last validated,
 * without a write on the hot path: both are kept in memory and flushed every
 * few seconds (and on shutdown) as one batch. The gateways' cached answers
 * arrive here in batches too (RecordValidations). A failed flush keeps its
 * data for the next one. The cost of a flush grows with the traffic since the
 * last one, never with the number of licences.
 */
export class ValidationCounter {
  /** Account and hour → its validations since the last flush. */
  private hourCounts = new Map<string, HourCount>();
  /** Licence id → its latest validation since the last flush. */
  private lastValidated = new Map<string, LastValidation>();
  /** Licence, hour, code and machine → the validations of that group since the last flush (the licence page's recent validations). */
  private recentGroups = new Map<string, RecentGroup>();
  /** Licence id → fingerprint → when a validation last named it since the last flush (the activations' last_seen_at). */
  private lastSeen = new Map<string, Map<string, Date>>();
  /** The machines in lastSeen, in all. */
  private seenMachines = 0;
  private task?: PeriodicTask;

  constructor(
    private readonly store: ValidationStatsStore,
    private readonly log: Logger,
    private readonly intervalMs: number,
    /** Stores when each machine was last seen (absent: not kept), once per flush as one batch. */
    private readonly storeSeen?: (seen: Map<string, Map<string, Date>>) => Promise<void>,
    /** Told of each entry dropped because its map was full (MAX_PENDING_ENTRIES). */
    private readonly dropped: (kind: DroppedTelemetry) => void = () => {},
    private readonly maxEntries = MAX_PENDING_ENTRIES,
  ) {}

  /** One validation this service answered. */
  record(accountId: string, code: string, valid: boolean, at: Date): void {
    this.add(accountId, hourOf(at), 1, valid ? 1 : 0, { [code]: 1 });
  }

  /** Validations of an account's hour (the gateways' counts, or a flush that failed). */
  add(accountId: string, hour: Date, validations: number, valid: number, byCode: CodeCounts = {}): void {
    const id = hourCountId(accountId, hour);
    const entry = this.hourCounts.get(id);
    if (entry) {
      entry.validations += validations;
      entry.valid += valid;
      addCodes(entry.byCode, byCode);
    } else if (this.hourCounts.size >= this.maxEntries) this.dropped('hour');
    else this.hourCounts.set(id, { accountId, hour: hourOf(hour), validations, valid, byCode: { ...byCode } });
  }

  validated(accountId: string, licenseId: string, at: Date): void {
    const last = this.lastValidated.get(licenseId);
    if (!last && this.lastValidated.size >= this.maxEntries) this.dropped('last_validated');
    else if (!last || last.at < at) this.lastValidated.set(licenseId, { accountId, at });
  }

  /** Validations of a licence, grouped by hour, code and machine (count them, keep the latest time). */
  addRecent(g: RecentGroup): void {
    if (g.fingerprint) this.seen(g.licenseId, g.fingerprint, g.lastAt);
    const id = recentGroupId(g);
    const entry = this.recentGroups.get(id);
    if (!entry) {
      if (this.recentGroups.size >= this.maxEntries) this.dropped('recent');
      else this.recentGroups.set(id, { ...g, hour: hourOf(g.hour) });
    } else {
      entry.count += g.count;
      if (entry.lastAt < g.lastAt) entry.lastAt = g.lastAt;
    }
  }

  /** A machine (a fingerprint of a licence) named by a validation at `at`. */
  private seen(licenseId: string, fingerprint: string, at: Date): void {
    if (!this.storeSeen) return;
    const machines = this.lastSeen.get(licenseId);
    const last = machines?.get(fingerprint);
    if (last) {
      if (last < at) machines!.set(fingerprint, at);
      return;
    }
    if (this.seenMachines >= this.maxEntries) {
      this.dropped('seen');
      return;
    }
    this.seenMachines++;
    if (machines) machines.set(fingerprint, at);
    else this.lastSeen.set(licenseId, new Map([[fingerprint, at]]));
  }

  async flush(): Promise<void> {
    const hourCounts = this.hourCounts;
    const lastValidated = this.lastValidated;
    const recentGroups = this.recentGroups;
    const lastSeen = this.lastSeen;
    this.lastSeen = new Map();
    this.seenMachines = 0;
    this.hourCounts = new Map();
    this.lastValidated = new Map();
    this.recentGroups = new Map();
    // Each store call writes one statement per entry, in the map's order, a few per command; a failure
    // says how many it stored (appliedBefore), and only the rest is kept for the next flush (the counts
    // are $inc: keeping what was stored would count it twice).
    if (hourCounts.size)
      await this.store.addHourCounts(hourCounts).catch((err) => {
        this.log.warn({ err }, 'could not store validation counts; will retry');
        for (const c of unstored(hourCounts.values(), err))
          this.add(c.accountId, c.hour, c.validations, c.valid, c.byCode);
      });
    if (lastValidated.size)
      await this.store.setLastValidated(lastValidated).catch((err) => {
        this.log.warn({ err }, 'could not store last-validated times; will retry');
        for (const [licenseId, v] of unstored(lastValidated, err)) this.validated(v.accountId, licenseId, v.at);
      });
    if (recentGroups.size)
      await this.store.addRecentGroups(recentGroups).catch((err) => {
        this.log.warn({ err }, 'could not store recent validations; will retry');
        for (const g of unstored(recentGroups.values(), err)) this.addRecent(g);
      });
    if (lastSeen.size && this.storeSeen)
      await this.storeSeen(lastSeen).catch((err) => {
        this.log.warn({ err }, 'could not store when machines were last seen; will retry');
        for (const [licenseId, machines] of lastSeen) for (const [f, at] of machines) this.seen(licenseId, f, at);
      });
  }

  start(): void {
    this.task = new PeriodicTask('validation counts flush', () => this.flush(), this.intervalMs, this.log);
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    await this.flush(); // the last seconds of counts
  }

  /** An account's hours from `from` on, as stored (flushed ones: a few seconds behind). */
  since(accountId: string, from: Date): Promise<HourBucket[]> {
    return this.store.hoursSince(accountId, from);
  }

  /** A licence's latest validation groups, newest first (flushed ones: a few seconds behind). */
  recent(licenseId: string, limit: number): Promise<RecentGroup[]> {
    return this.store.recentGroups(licenseId, limit);
  }

  /** When the licence was last validated (null = never, or not yet flushed). */
  async lastValidatedAt(licenseId: string): Promise<Date | null> {
    return this.lastValidated.get(licenseId)?.at ?? this.store.lastValidatedAt(licenseId);
  }
}

/** The entries a failed store call did not store: those from the first statement it had not applied. */
function unstored<T>(entries: Iterable<T>, err: unknown): T[] {
  return [...entries].slice(appliedBefore(err));
}
