import { PeriodicTask, type Logger } from '@licensing/runtime';
import type { LastValidated, ValidationSeen, ValidationTally as HourTally } from '@licensing/proto';
import type { Clients } from './clients';

const HOUR_MS = 3600_000;

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
  /** The hour of the last validation and its RFC 3339 form: formatted once an hour, not per request. */
  private hour = { ms: -1, iso: '' };
  private task?: PeriodicTask;

  constructor(
    private readonly clients: Clients,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  record(accountId: string, code: string, valid: boolean, at: Date): void {
    const hourMs = Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
    const id = `${accountId}:${hourMs}`;
    let t = this.tallies.get(id);
    if (!t) {
      t = { account_id: accountId, hour: new Date(hourMs).toISOString(), validations: 0, valid: 0, by_code: {} };
      this.tallies.set(id, t);
    }
    t.validations++;
    if (valid) t.valid++;
    t.by_code[code] = (t.by_code[code] ?? 0) + 1;
  }

  validated(accountId: string, licenseId: string, at: Date, code = '', fingerprint = ''): void {
    const atMs = at.getTime();
    const seen = this.seen.get(licenseId);
    if (seen) seen.at = atMs;
    else this.seen.set(licenseId, { accountId, at: atMs });
    if (!code) return;
    const hour = this.hourOf(atMs);
    const id = `${licenseId}\n${hour}\n${code}\n${fingerprint}`;
    const g = this.groups.get(id);
    if (g) {
      g.count++;
      g.lastAtMs = atMs;
    } else
      this.groups.set(id, {
        account_id: accountId,
        license_id: licenseId,
        hour,
        code,
        fingerprint,
        count: 1,
        lastAtMs: atMs,
      });
  }

  private hourOf(atMs: number): string {
    const ms = Math.floor(atMs / HOUR_MS) * HOUR_MS;
    if (ms !== this.hour.ms) this.hour = { ms, iso: new Date(ms).toISOString() };
    return this.hour.iso;
  }

  async flush(): Promise<void> {
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
