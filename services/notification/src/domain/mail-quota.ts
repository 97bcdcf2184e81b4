// The rules of an account's mail quota and of the order mail goes out in (unit tested:
// services/notification/test/unit/notification-mail-quota.test.ts). The figures per plan are in @licensing/proto
// (PLAN_MAIL_QUOTA), shown on GET /api/v1/status.
import { MAIL_DAY_MS, MAIL_HOUR_MS, mailWindowAt, type MailQuota } from '@licensing/proto';

/** A window of the quota as counted: the counter's id, the account's limit in it, and when it ends. */
export interface CountedWindow {
  id: string;
  limit: number;
  endsAt: Date;
}

/** The two windows a mail asked for at `now` counts in: the clock hour, then the day. */
export function quotaWindows(accountId: string, quota: MailQuota, now: Date): [CountedWindow, CountedWindow] {
  const hour = mailWindowAt(now, MAIL_HOUR_MS);
  const day = mailWindowAt(now, MAIL_DAY_MS);
  return [
    { id: `${accountId}:h:${hour.bucket}`, limit: quota.perHour, endsAt: hour.endsAt },
    { id: `${accountId}:d:${day.bucket}`, limit: quota.perDay, endsAt: day.endsAt },
  ];
}

/**
 * What becomes of a mail: queued, with its turn (the n-th mail of its account this hour: the sender
 * takes mail by turn, so every account's first mail goes before any account's second, a round-robin
 * by account), or deferred until the window that refused it ends.
 */
export type Admission = { status: 'queued'; turn: number } | { status: 'deferred'; until: Date };

/**
 * Judges counts already taken (each window's count including this mail): the first window past its
 * limit defers the mail to its end. Only the windows counted before the refusing one are to be given
 * back by the caller (refusedAt says which).
 */
export function judge(windows: CountedWindow[], counts: number[]): Admission & { refusedAt?: number } {
  for (let i = 0; i < counts.length; i++)
    if (counts[i] > windows[i].limit) return { status: 'deferred', until: windows[i].endsAt, refusedAt: i };
  return { status: 'queued', turn: counts[0] };
}
