// When a mail that failed is tried again, and how long a graceful stop may wait for a send. Pure: unit
// tested (services/notification/test/unit/notification-mail.test.ts).

/** About 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h; then every 12 h until the mail's maximum age. */
export const DEFAULT_MAIL_SCHEDULE_S = [10, 60, 300, 1800, 7200, 21600, 43200];

/** MAIL_MAX_AGE_S's default: a mail not sent within 3 days of being asked is failed. */
export const DEFAULT_MAIL_MAX_AGE_S = 3 * 86_400;

/** MAIL_RETRY_SCHEDULE_S ("10,60,…") as seconds; throws on anything that is not a list of non-negative numbers. */
export function parseSchedule(text: string): number[] {
  const parts = text.split(',').map((x) => x.trim());
  const s = parts.map(Number);
  if (parts.some((x) => x === '') || s.some((n) => !(n >= 0) || !Number.isFinite(n)))
    throw new Error('MAIL_RETRY_SCHEDULE_S must be comma-separated numbers of seconds');
  return s;
}

export type MailStep = { kind: 'retry'; at: Date } | { kind: 'failed'; reason: string };

/** "3 days", "5 hours", "90 s": how the give-up message names the maximum age. */
export function spanText(seconds: number): string {
  const whole = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds >= 86_400 && seconds % 86_400 === 0) return whole(seconds / 86_400, 'day');
  if (seconds >= 3600 && seconds % 3600 === 0) return whole(seconds / 3600, 'hour');
  if (seconds >= 60 && seconds % 60 === 0) return whole(seconds / 60, 'minute');
  return `${seconds} s`;
}

/**
 * After the `attemptsMade`-th failed attempt of a mail asked at `createdAt`: when to try again. The
 * schedule's waits come first, then its last wait over and over (so a mail server that is away for
 * days still gets the mail once it is back), until `maxAgeS` after the mail was asked: one last attempt
 * is made at that moment, and a mail that fails then (or later) is failed for good, saying why.
 */
export function nextMailStep(
  attemptsMade: number,
  now: Date,
  scheduleS: number[],
  createdAt: Date,
  maxAgeS: number,
): MailStep {
  const deadline = createdAt.getTime() + maxAgeS * 1000;
  if (now.getTime() >= deadline)
    return {
      kind: 'failed',
      reason: `not sent within MAIL_MAX_AGE_S (${spanText(maxAgeS)}) after ${attemptsMade} attempt${attemptsMade === 1 ? '' : 's'}; given up`,
    };
  const wait = scheduleS[Math.min(attemptsMade, scheduleS.length) - 1] ?? 0;
  return { kind: 'retry', at: new Date(Math.min(now.getTime() + wait * 1000, deadline)) };
}

/**
 * The send timeout a stopping process can wait out: MAIL_SEND_TIMEOUT_MS, but never more than
 * SHUTDOWN_TIMEOUT_MS, since the process is ended SHUTDOWN_TIMEOUT_MS + 5 s after the signal whatever
 * it is doing (packages/runtime/src/service.ts, runMain). `clamped` says the setting was lowered.
 */
export function sendTimeoutWithin(sendTimeoutMs: number, shutdownTimeoutMs: number): { ms: number; clamped: boolean } {
  return sendTimeoutMs <= shutdownTimeoutMs
    ? { ms: sendTimeoutMs, clamped: false }
    : { ms: shutdownTimeoutMs, clamped: true };
}
