import { mailQuotaOf } from '@licensing/proto';
import { judge, quotaWindows, type Admission, type CountedWindow } from '../domain/mail-quota';
import type { MailCountStore } from '../store/mail-quota';

/** An account's plan (the account service's GetAccount). */
export type PlanLookup = (accountId: string) => Promise<string>;

/** How long an account's plan is trusted: a plan change takes effect on mail within a minute. */
export const PLAN_CACHE_MS = 60_000;
/** Accounts whose plan is remembered at most (the oldest entry goes first). */
const PLAN_CACHE_MAX = 10_000;

/** A window's counter is kept a day past its end, then deleted. */
const counterExpiry = (w: CountedWindow) => new Date(w.endsAt.getTime() + 86_400_000);

/**
 * Decides, as each mail is stored, whether it may be sent now by its account's mail quota (per hour and
 * per day, by plan), and counts it if so. Mail over the quota is deferred, not refused: it is stored,
 * listed as `deferred`, and the sender queues it when a window with room begins (jobs/sender.ts).
 */
export class MailAdmission {
  private readonly plans = new Map<string, { plan: string; untilMs: number }>();

  constructor(
    private readonly counts: MailCountStore,
    private readonly planLookup: PlanLookup,
  ) {}

  private async planOf(accountId: string, now: Date): Promise<string> {
    const known = this.plans.get(accountId);
    if (known && known.untilMs > now.getTime()) return known.plan;
    const plan = await this.planLookup(accountId);
    this.plans.delete(accountId);
    if (this.plans.size >= PLAN_CACHE_MAX) this.plans.delete(this.plans.keys().next().value!);
    this.plans.set(accountId, { plan, untilMs: now.getTime() + PLAN_CACHE_MS });
    return plan;
  }

  /**
   * Counts one mail of the account in the hour and the day of `now`: queued (with its turn) when both
   * have room, else deferred to the end of the window that has none, and nothing stays counted.
   */
  async admit(accountId: string, now: Date): Promise<Admission> {
    const windows = quotaWindows(accountId, mailQuotaOf(await this.planOf(accountId, now)), now);
    const counts: number[] = [];
    for (const w of windows) counts.push(await this.counts.add(w.id, 1, counterExpiry(w)));
    const verdict = judge(windows, counts);
    if (verdict.status === 'deferred') {
      await this.giveBack(windows);
      return { status: 'deferred', until: verdict.until };
    }
    return verdict;
  }

  /** Takes back a mail counted at `at` that was not stored after all (its request was already there). */
  async forget(accountId: string, at: Date): Promise<void> {
    await this.giveBack(quotaWindows(accountId, { perHour: 0, perDay: 0 }, at));
  }

  private async giveBack(windows: CountedWindow[]): Promise<void> {
    for (const w of windows) await this.counts.add(w.id, -1, counterExpiry(w));
  }

  /** Deletes ended counters (a bounded batch). */
  deleteEnded(now: Date): Promise<number> {
    return this.counts.deleteEnded(now);
  }
}
