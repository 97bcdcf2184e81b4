// Validation counts are kept per account and hour. These are the pure parts:
// which hour a moment falls in, and the 24-slot series the dashboard draws.
export const HOUR_MS = 3600_000;

export const hourOf = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

export interface HourBucket {
  hour: Date;
  validations: number;
  valid: number;
}

/** The last 24 hours ending with the current one, oldest first, with zeros where nothing was counted. */
export function last24Hours(buckets: HourBucket[], now: Date): HourBucket[] {
  const current = hourOf(now).getTime();
  const byHour = new Map(buckets.map((b) => [b.hour.getTime(), b]));
  const out: HourBucket[] = [];
  for (let i = 23; i >= 0; i--) {
    const t = current - i * HOUR_MS;
    const b = byHour.get(t);
    out.push({ hour: new Date(t), validations: b?.validations ?? 0, valid: b?.valid ?? 0 });
  }
  return out;
}
