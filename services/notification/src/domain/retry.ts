// When a mail that failed is tried again. Pure: unit tested (test/unit/notification-mail.test.ts).

/** About 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h: eight attempts over about 21 hours. */
export const DEFAULT_MAIL_SCHEDULE_S = [10, 60, 300, 1800, 7200, 21600, 43200];

/** MAIL_RETRY_SCHEDULE_S ("10,60,…") as seconds; throws on anything that is not a list of non-negative numbers. */
export function parseSchedule(text: string): number[] {
  const parts = text.split(',').map((x) => x.trim());
  const s = parts.map(Number);
  if (parts.some((x) => x === '') || s.some((n) => !(n >= 0) || !Number.isFinite(n)))
    throw new Error('MAIL_RETRY_SCHEDULE_S must be comma-separated numbers of seconds');
  return s;
}

export type MailStep = { kind: 'retry'; at: Date } | { kind: 'failed' };

/** After the `attemptsMade`-th failed attempt: when to try again, or failed once the schedule runs out. */
export function nextMailStep(attemptsMade: number, now: Date, scheduleS: number[]): MailStep {
  const wait = scheduleS[attemptsMade - 1];
  return wait === undefined ? { kind: 'failed' } : { kind: 'retry', at: new Date(now.getTime() + wait * 1000) };
}
