import { validationCodes } from '@licensing/proto';

// Validation counts are kept per account and hour, split by answer code. These
// are the pure parts: which hour a moment falls in, and the series the
// dashboard draws (24 hours, 30 days).
export const HOUR_MS = 3600_000;
export const DAY_MS = 24 * HOUR_MS;

export const hourOf = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
export const dayOf = (at: Date): Date => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);

/** Only the answer codes judge() gives are counted; anything else sent to RecordValidations is dropped. */
export const isCode = (code: string) => (validationCodes as readonly string[]).includes(code);

export type CodeCounts = Record<string, number>;

export interface HourBucket {
  hour: Date;
  validations: number;
  valid: number;
  byCode: CodeCounts;
}

export interface DayBucket {
  day: Date;
  validations: number;
  valid: number;
  byCode: CodeCounts;
}

export function addCodes(into: CodeCounts, from: CodeCounts): CodeCounts {
  for (const [code, n] of Object.entries(from)) into[code] = (into[code] ?? 0) + n;
  return into;
}

/** The last 24 hours ending with the current one, oldest first, with zeros where nothing was counted. */
export function last24Hours(buckets: HourBucket[], now: Date): HourBucket[] {
  const current = hourOf(now).getTime();
  const byHour = new Map(buckets.map((b) => [b.hour.getTime(), b]));
  const out: HourBucket[] = [];
  for (let i = 23; i >= 0; i--) {
    const t = current - i * HOUR_MS;
    const b = byHour.get(t);
    out.push({
      hour: new Date(t),
      validations: b?.validations ?? 0,
      valid: b?.valid ?? 0,
      byCode: { ...(b?.byCode ?? {}) },
    });
  }
  return out;
}

/** The last 30 days (UTC) ending with today, oldest first: the hourly buckets added up per day. */
export function last30Days(buckets: HourBucket[], now: Date): DayBucket[] {
  const today = dayOf(now).getTime();
  const days = new Map<number, DayBucket>();
  for (let i = 29; i >= 0; i--)
    days.set(today - i * DAY_MS, { day: new Date(today - i * DAY_MS), validations: 0, valid: 0, byCode: {} });
  for (const b of buckets) {
    const d = days.get(dayOf(b.hour).getTime());
    if (!d) continue;
    d.validations += b.validations;
    d.valid += b.valid;
    addCodes(d.byCode, b.byCode);
  }
  return [...days.values()];
}
