import { DAY_MS, HOUR_MS, hourOf, isCode, last24Hours, last30Days } from '../../src/domain/stats';

describe('validation stats', () => {
  const now = new Date('2026-06-01T10:42:13Z');

  it('buckets a moment into its UTC hour', () => {
    expect(hourOf(now).toISOString()).toBe('2026-06-01T10:00:00.000Z');
  });

  it('gives 24 hours ending with the current one, oldest first, zero-filled, with the codes of each', () => {
    const series = last24Hours(
      [
        { hour: new Date('2026-06-01T10:00:00Z'), validations: 5, valid: 4, byCode: { valid: 4, revoked: 1 } },
        { hour: new Date('2026-05-31T11:00:00Z'), validations: 2, valid: 2, byCode: {} },
        { hour: new Date('2026-05-31T10:00:00Z'), validations: 9, valid: 9, byCode: { valid: 9 } }, // 24 h ago: outside
      ],
      now,
    );
    expect(series).toHaveLength(24);
    expect(series[0]).toEqual({ hour: new Date('2026-05-31T11:00:00Z'), validations: 2, valid: 2, byCode: {} });
    expect(series[23]).toEqual({
      hour: new Date('2026-06-01T10:00:00Z'),
      validations: 5,
      valid: 4,
      byCode: { valid: 4, revoked: 1 },
    });
    expect(series.slice(1, 23).every((b) => b.validations === 0)).toBe(true);
    expect(series[1].hour.getTime() - series[0].hour.getTime()).toBe(HOUR_MS);
  });

  it('adds the hours up into 30 UTC days ending with today, codes included', () => {
    const series = last30Days(
      [
        { hour: new Date('2026-06-01T10:00:00Z'), validations: 5, valid: 4, byCode: { valid: 4, revoked: 1 } },
        { hour: new Date('2026-06-01T01:00:00Z'), validations: 3, valid: 1, byCode: { valid: 1, not_found: 2 } },
        { hour: new Date('2026-05-03T00:00:00Z'), validations: 7, valid: 7, byCode: { valid: 7 } }, // the oldest day shown
        { hour: new Date('2026-05-02T23:00:00Z'), validations: 1, valid: 1, byCode: { valid: 1 } }, // 30 days ago: outside
      ],
      now,
    );
    expect(series).toHaveLength(30);
    expect(series[29]).toEqual({
      day: new Date('2026-06-01T00:00:00Z'),
      validations: 8,
      valid: 5,
      byCode: { valid: 5, revoked: 1, not_found: 2 },
    });
    expect(series[0]).toEqual({
      day: new Date('2026-05-03T00:00:00Z'),
      validations: 7,
      valid: 7,
      byCode: { valid: 7 },
    });
    expect(series.reduce((n, d) => n + d.validations, 0)).toBe(15);
    expect(series[1].day.getTime() - series[0].day.getTime()).toBe(DAY_MS);
  });

  it('accepts only snake_case answer codes from gateways', () => {
    expect(isCode('activation_limit_reached')).toBe(true);
    expect(['', 'valid.$inc', 'Valid', 'x'.repeat(41), 'nope'].some(isCode)).toBe(false);
  });
});
