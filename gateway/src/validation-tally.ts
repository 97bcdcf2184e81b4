import { PeriodicTask, type Logger } from '@licensing/runtime';
import type { LastValidated, ValidationSeen, ValidationTally as HourTally } from '@licensing/proto';
import type { Clients } from './clients';

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
 * Validations answered from the gateway's cache still count: per account and
 * hour, and when each licence was last validated. They are added up in memory
 * and sent to the licence service in one call every few seconds (and on
 * shutdown), so no request waits for or causes a write. A failed send keeps
 * its counts for the next one.
 */
export class ValidationTally {
  private tallies = new Map<string, HourTally>();
  /** Licence id → account and last validation (epoch ms; formatted only when sent). */
  private seen = new Map<string, { accountId: string; at: number }>();
  /** Licence, hour, code and machine → how many and the latest (the licence page's recent validations; last_at in epoch ms until sent). */
  private groups = new Map<string, Omit<ValidationSeen, 'last_at'> & { lastAtMs: number }>();
  /** Cells counted since the last flush (TallyCell.add puts a cell here with its first count). */
  readonly pending: TallyCell[] = [];
  /** The hour of the last validation and its RFC 3339 form: formatted once an hour, not per request. */
  private hour = { ms: -1, iso: '' };
  private task?: PeriodicTask;

  constructor(
    private readonly clients: Clients,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  /** A cell for validations that all count alike (see TallyCell); it counts nothing until add(). */
  cell(accountId: string, code: string, valid: boolean, at: Date, licenseId = '', fingerprint = ''): TallyCell {
    const hourMs = Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
    return new TallyCell(this, accountId, code, valid, licenseId, fingerprint, hourMs);
  }

  record(accountId: string, code: string, valid: boolean, at: Date, n = 1): void {
    const hourMs = Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
    const id = `${accountId}:${hourMs}`;
    let t = this.tallies.get(id);
    if (!t) {
      t = { account_id: accountId, hour: new Date(hourMs).toISOString(), validations: 0, valid: 0, by_code: {} };
      this.tallies.set(id, t);
    }
    t.validations += n;
    if (valid) t.valid += n;
    t.by_code[code] = (t.by_code[code] ?? 0) + n;
  }

  validated(accountId: string, licenseId: string, at: Date, code = '', fingerprint = '', n = 1): void {
    const atMs = at.getTime();
    const seen = this.seen.get(licenseId);
    if (!seen) this.seen.set(licenseId, { accountId, at: atMs });
    else if (atMs > seen.at) seen.at = atMs;
    if (!code) return;
    const hour = this.hourOf(atMs);
    const id = `${licenseId}\n${hour}\n${code}\n${fingerprint}`;
    const g = this.groups.get(id);
    if (g) {
      g.count += n;
      if (atMs > g.lastAtMs) g.lastAtMs = atMs;
    } else
      this.groups.set(id, {
        account_id: accountId,
        license_id: licenseId,
        hour,
        code,
        fingerprint,
        count: n,
        lastAtMs: atMs,
      });
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

  async flush(): Promise<void> {
    this.foldCells();
    if (!this.tallies.size && !this.seen.size && !this.groups.size) return;
    const tallies = this.tallies;
    const seen = this.seen;
    const groups = this.groups;
    this.tallies = new Map();
    this.seen = new Map();
    this.groups = new Map();
    try {
      const lastValidated: LastValidated[] = [...seen].map(([licenseId, v]) => ({
        account_id: v.accountId,
        license_id: licenseId,
        at: new Date(v.at).toISOString(),
      }));
      await this.clients.licenses.recordValidations({
        tallies: [...tallies.values()],
        last_validated: lastValidated,
        seen: [...groups.values()].map(({ lastAtMs, ...g }) => ({ ...g, last_at: new Date(lastAtMs).toISOString() })),
      });
    } catch (err) {
      this.log.warn({ err }, 'could not send validation counts to the licence service; will retry');
      for (const [id, t] of tallies) {
        const now = this.tallies.get(id);
        if (now) {
          now.validations += t.validations;
          now.valid += t.valid;
          for (const [code, n] of Object.entries(t.by_code)) now.by_code[code] = (now.by_code[code] ?? 0) + n;
        } else this.tallies.set(id, t);
      }
      for (const [id, v] of seen) if (!this.seen.has(id)) this.seen.set(id, v);
      for (const [id, g] of groups) {
        const now = this.groups.get(id);
        if (now) now.count += g.count;
        else this.groups.set(id, g);
      }
    }
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
