import { HOUR_MS, hourOf, last24Hours } from '../../services/license/src/domain/stats';

describe('validation stats', () => {
  const now = new Date('2026-06-01T10:42:13Z');

  it('buckets a moment into its UTC hour', () => {
    expect(hourOf(now).toISOString()).toBe('2026-06-01T10:00:00.000Z');
  });

  it('gives 24 hours ending with the current one, oldest first, zero-filled', () => {
    const series = last24Hours(
      [
        { hour: new Date('2026-06-01T10:00:00Z'), validations: 5, valid: 4 },
        { hour: new Date('2026-05-31T11:00:00Z'), validations: 2, valid: 2 },
        { hour: new Date('2026-05-31T10:00:00Z'), validations: 9, valid: 9 }, // 24 h ago: outside
      ],
      now,
    );
    expect(series).toHaveLength(24);
    expect(series[0]).toEqual({ hour: new Date('2026-05-31T11:00:00Z'), validations: 2, valid: 2 });
    expect(series[23]).toEqual({ hour: new Date('2026-06-01T10:00:00Z'), validations: 5, valid: 4 });
    expect(series.slice(1, 23).every((b) => b.validations === 0)).toBe(true);
    expect(series[1].hour.getTime() - series[0].hour.getTime()).toBe(HOUR_MS);
  });
});
