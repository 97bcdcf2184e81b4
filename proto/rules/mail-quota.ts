import type { Plan } from './vocabulary';

// How much customer mail an account may send from the operator's address, by plan. The
// notification service enforces it (mail past it is stored `deferred` and sent when the quota
// allows, never dropped); GET /api/v1/status shows it. Windows are fixed: the UTC clock hour and the
// UTC day, so "when the quota allows" is the start of the next one.

export interface MailQuota {
  /** Mails per clock hour (UTC). */
  perHour: number;
  /** Mails per day (UTC). */
  perDay: number;
}

/**
 * Each plan's mail quota: a plan added to vocabulary.ts does not compile without one. The free plan
 * covers a small shop's purchase mails and sign-ins, not a bulk mailing (a batch of 1,000 items with
 * send_email costs one request, so the request quota alone does not bound mail).
 */
export const PLAN_MAIL_QUOTA: Record<Plan, MailQuota> = {
  free: { perHour: 50, perDay: 200 },
  pro: { perHour: 1000, perDay: 10_000 },
  enterprise: { perHour: 10_000, perDay: 100_000 },
};

/** The quota of an account's plan (an unknown plan is held to the free plan's). */
export const mailQuotaOf = (plan: string): MailQuota => PLAN_MAIL_QUOTA[plan as Plan] ?? PLAN_MAIL_QUOTA.free;

export const MAIL_HOUR_MS = 3_600_000;
export const MAIL_DAY_MS = 86_400_000;

/** One fixed window of the quota: which one (its number since the epoch) and when it ends. */
export interface MailWindow {
  bucket: number;
  endsAt: Date;
}

/** The window of length `ms` that `now` falls in. */
export function mailWindowAt(now: Date, ms: number): MailWindow {
  const bucket = Math.floor(now.getTime() / ms);
  return { bucket, endsAt: new Date((bucket + 1) * ms) };
}
