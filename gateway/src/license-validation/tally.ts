import { PeriodicTask, type AppError, type Logger, type Metrics } from '@licensing/runtime';
import type { ValidationSeen, ValidationTally as HourTally } from '@licensing/proto';
import type { Clients } from '../backends/clients';
import { chunksOf, requestOf, type CountEntry, type CountKind } from './tally-chunks';

// Part of a validation's flow through license-validation/, drawn in validator.ts's header.

const HOUR_MS = 3600_000;

/**
 * One kind of validation (account, answer code, licence, machine, hour) counted where it is answered
 * many times (the gateway's answers of the current second): a number per validation, added to the
 * tally at its next flush.
 */
export class TallyCell {
  count = 0;
  lastAtMs = 0;

  constructor(
    private readonly tally: ValidationTally,
    readonly accountId: string,
    readonly code: string,
    readonly valid: boolean,
    /** The licence, when the caller may see it (else its validations count only in the account's tally). */
    readonly licenseId: string,
    readonly fingerprint: string,
    readonly hourMs: number,
  ) {}

  add(atMs: number): void {
    if (this.count++ === 0) this.tally.pending.push(this);
    this.lastAtMs = atMs;
  }
}

/**
 * Most counts a tally keeps waiting for the licence service, of each kind (an account's hour, a
 * licence's last validation, a group of recent validations): with the service away for minutes and
 * many machines validating, the oldest are dropped beyond this (counted in
 * licensing_validation_counts_dropped_total, and logged), so a long outage costs counts, never the
 * gateway's memory (about 340 bytes an entry, measured: some 50 MB with all three full).
 */
export const MAX_WAITING_COUNTS = 50_000;
/**
 * Largest call to the licence service: a quarter of the 1 MiB a service accepts (grpc-server.ts),
 * so the estimate's margin and the call's own framing never reach it. A backlog goes in several calls.
 */
export const COUNTS_CALL_BYTES = 256 * 1024;

export interface TallyLimits {
  maxWaiting: number;
  callBytes: number;
}

/**
 * Validations answered from the gateway's cache still count: per account and
 * hour, and when each licence was last validated. They are added up in memory
 * and sent to the licence service every few seconds (and on shutdown), so no
 * request waits for or causes a write. They go in calls of at most
 * COUNTS_CALL_BYTES, oldest first; a call the service refuses as too large
 * (RESOURCE_EXHAUSTED) is split in halves, never kept whole (it could never
 * pass); a call that fails otherwise (the service away) keeps its counts, and
 * those after it, for the next flush, at most MAX_WAITING_COUNTS of each kind.
 */
export class ValidationTally {
  /** Account and hour → its validations, by answer code (RecordValidations' `tallies`). */
  private hourCounts = new Map<string, HourTally>();
  /** Licence id → account and last validation (epoch ms; formatted only when sent; RecordValidations' `last_validated`). */
  private lastValidated = new Map<string, { accountId: string; at: number }>();
  /** Licence, hour, code and machine → how many and the latest (the licence page's recent validations, RecordValidations' `seen`; last_at in epoch ms until sent). */
  private recentGroups = new Map<string, Omit<ValidationSeen, 'last_at'> & { lastAtMs: number }>();
  /** Cells counted since the last flush (TallyCell.add puts a cell here with its first count). */
  readonly pending: TallyCell[] = [];
  /** The hour of the last validation and its RFC 3339 form: formatted once an hour, not per request. */
  private hour = { ms: -1, iso: '' };
  private task?: PeriodicTask;
  private readonly limits: TallyLimits;
  /** Entries dropped since the last log line, by kind. */
  private dropped: Partial<Record<CountKind, number>> = {};
  private readonly droppedTotal?: ReturnType<Metrics['counter']>;

  constructor(
    private readonly clients: Clients,
    private readonly log: Logger,
    private readonly intervalMs: number,
    metrics?: Metrics,
    limits: Partial<TallyLimits> = {},
  ) {
    this.limits = { maxWaiting: MAX_WAITING_COUNTS, callBytes: COUNTS_CALL_BYTES, ...limits };
    this.droppedTotal = metrics?.counter('licensing_validation_counts_dropped_total', ['kind']);
  }

  /** A cell for validations that all count alike (see TallyCell); it counts nothing until add(). */
  cell(accountId: string, code: string, valid: boolean, at: Date, licenseId = '', fingerprint = ''): TallyCell {
    const hourMs = Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
    return new TallyCell(this, accountId, code, valid, licenseId, fingerprint, hourMs);
  }

  record(accountId: string, code: string, valid: boolean, at: Date, n = 1): void {
    const hourMs = Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
    const id = `${accountId}:${hourMs}`;
    let t = this.hourCounts.get(id);
    if (!t) {
      this.makeRoom(this.hourCounts, 'tally');
      t = { account_id: accountId, hour: new Date(hourMs).toISOString(), validations: 0, valid: 0, by_code: {} };
      this.hourCounts.set(id, t);
    }
    t.validations += n;
    if (valid) t.valid += n;
    t.by_code[code] = (t.by_code[code] ?? 0) + n;
  }

  validated(accountId: string, licenseId: string, at: Date, code = '', fingerprint = '', n = 1): void {
    const atMs = at.getTime();
    const last = this.lastValidated.get(licenseId);
    if (!last) {
      this.makeRoom(this.lastValidated, 'last_validated');
      this.lastValidated.set(licenseId, { accountId, at: atMs });
    } else if (atMs > last.at) last.at = atMs;
    if (!code) return;
    const hour = this.hourOf(atMs);
    const id = `${licenseId}\n${hour}\n${code}\n${fingerprint}`;
    const g = this.recentGroups.get(id);
    if (g) {
      g.count += n;
      if (atMs > g.lastAtMs) g.lastAtMs = atMs;
    } else {
      this.makeRoom(this.recentGroups, 'seen');
      this.recentGroups.set(id, {
        account_id: accountId,
        license_id: licenseId,
        hour,
        code,
        fingerprint,
        count: n,
        lastAtMs: atMs,
      });
    }
  }

  /** Before a new entry: drops the oldest of its kind while the map is full (a Map iterates oldest first). */
  private makeRoom(map: Map<string, unknown>, kind: CountKind, room = 1): void {
    while (map.size > this.limits.maxWaiting - room) {
      map.delete(map.keys().next().value!);
      this.drop(kind);
    }
  }

  private drop(kind: CountKind, n = 1): void {
    this.dropped[kind] = (this.dropped[kind] ?? 0) + n;
    this.droppedTotal?.inc({ kind }, n);
  }

  private hourOf(atMs: number): string {
    const ms = Math.floor(atMs / HOUR_MS) * HOUR_MS;
    if (ms !== this.hour.ms) this.hour = { ms, iso: new Date(ms).toISOString() };
    return this.hour.iso;
  }

  /** What the cells counted since the last flush, into the tallies (a cell is reused: its count starts again). */
  private foldCells(): void {
    for (const c of this.pending) {
      const last = new Date(c.lastAtMs);
      this.record(c.accountId, c.code, c.valid, new Date(c.hourMs), c.count);
      if (c.licenseId) this.validated(c.accountId, c.licenseId, last, c.code, c.fingerprint, c.count);
      c.count = 0;
    }
    this.pending.length = 0;
  }

  /** Everything waiting, oldest first within each kind, and the tally emptied. */
  private takeAll(): CountEntry[] {
    const entries: CountEntry[] = [];
    for (const [id, tally] of this.hourCounts) entries.push({ kind: 'tally', id, tally });
    for (const [id, v] of this.lastValidated)
      entries.push({ kind: 'last_validated', id, accountId: v.accountId, at: v.at });
    for (const [id, group] of this.recentGroups) entries.push({ kind: 'seen', id, group });
    this.hourCounts = new Map();
    this.lastValidated = new Map();
    this.recentGroups = new Map();
    return entries;
  }

  async flush(): Promise<void> {
    this.foldCells();
    if (this.hourCounts.size || this.lastValidated.size || this.recentGroups.size) {
      const chunks = chunksOf(this.takeAll(), this.limits.callBytes);
      for (let i = 0; i < chunks.length; i++) {
        const unsent = await this.send(chunks[i]);
        if (unsent) {
          this.keep([...unsent, ...chunks.slice(i + 1).flat()]);
          break;
        }
      }
    }
    if (Object.keys(this.dropped).length) {
      this.log.warn(
        { dropped: this.dropped, max_waiting: this.limits.maxWaiting },
        'dropped the oldest validation counts: too many waited for the licence service',
      );
      this.dropped = {};
    }
  }

  /**
   * One call; when the service refuses it as too large, its two halves, each the same way (one entry
   * too large alone is dropped). What could not be sent because the service failed otherwise comes
   * back (undefined: all sent).
   */
  private async send(entries: CountEntry[]): Promise<CountEntry[] | undefined> {
    try {
      await this.clients.licenses.recordValidations(requestOf(entries));
      return undefined;
    } catch (err) {
      // RESOURCE_EXHAUSTED (a message over the service's limit) reaches us as rate_limited (runtime/core/errors.ts).
      if ((err as AppError).code !== 'rate_limited') {
        this.log.warn({ err }, 'could not send validation counts to the licence service; will retry');
        return entries;
      }
      if (entries.length === 1) {
        this.log.warn({ err, kind: entries[0].kind }, 'the licence service refused one validation count as too large');
        this.drop(entries[0].kind);
        return undefined;
      }
      const half = entries.length >> 1;
      const first = await this.send(entries.slice(0, half));
      if (first) return [...first, ...entries.slice(half)];
      return this.send(entries.slice(half));
    }
  }

  /**
   * Puts entries that were not sent back in front of what was counted meanwhile (they are older),
   * adding up what both hold, then drops the oldest of each kind beyond the bound.
   */
  private keep(unsent: CountEntry[]): void {
    const [hourCounts, lastValidated, recentGroups] = [this.hourCounts, this.lastValidated, this.recentGroups];
    this.hourCounts = new Map();
    this.lastValidated = new Map();
    this.recentGroups = new Map();
    for (const e of unsent) {
      if (e.kind === 'tally') this.hourCounts.set(e.id, e.tally);
      else if (e.kind === 'last_validated') this.lastValidated.set(e.id, { accountId: e.accountId, at: e.at });
      else this.recentGroups.set(e.id, e.group);
    }
    for (const [id, t] of hourCounts) {
      const old = this.hourCounts.get(id);
      if (!old) this.hourCounts.set(id, t);
      else {
        old.validations += t.validations;
        old.valid += t.valid;
        for (const [code, n] of Object.entries(t.by_code)) old.by_code[code] = (old.by_code[code] ?? 0) + n;
      }
    }
    for (const [id, v] of lastValidated) {
      const old = this.lastValidated.get(id);
      if (!old) this.lastValidated.set(id, v);
      else if (v.at > old.at) old.at = v.at;
    }
    for (const [id, g] of recentGroups) {
      const old = this.recentGroups.get(id);
      if (!old) this.recentGroups.set(id, g);
      else {
        old.count += g.count;
        if (g.lastAtMs > old.lastAtMs) old.lastAtMs = g.lastAtMs;
      }
    }
    this.makeRoom(this.hourCounts, 'tally', 0);
    this.makeRoom(this.lastValidated, 'last_validated', 0);
    this.makeRoom(this.recentGroups, 'seen', 0);
  }

  start(): void {
    this.task = new PeriodicTask('validation tally flush', () => this.flush(), this.intervalMs, this.log);
    this.task.start();
  }

  /** Sends what is left (graceful shutdown: nothing counted is lost). */
  async stop(): Promise<void> {
    await this.task?.stop();
    await this.flush();
  }
}
