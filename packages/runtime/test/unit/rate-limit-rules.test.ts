import { bindingBudget, limitsFor, rejectionDetail, type BudgetState } from '@licensing/runtime';
import { rateLimitHeaders } from '@licensing/runtime';

const w = (name: 'minute' | 'hour', limit: number, remaining: number, resetS: number): BudgetState => ({
  name,
  limit,
  windowS: name === 'hour' ? 3600 : 60,
  remaining,
  resetS,
});

describe('effective limits', () => {
  it('come from the plan unless an operator override is set', () => {
    expect(limitsFor({ plan: 'free', perMinuteOverride: 0, perHourOverride: 0 })).toEqual({
      minute: 100,
      hour: 100,
      appHour: 1000,
      licenseMinute: 60,
      validateKeyMinute: 100,
      heartbeatMinute: 10,
      unknownMinute: 30,
    });
    expect(limitsFor({ plan: 'pro', perMinuteOverride: 0, perHourOverride: 0 })).toEqual({
      minute: 100,
      hour: 1000,
      appHour: 10_000,
      licenseMinute: 60,
      validateKeyMinute: 500,
      heartbeatMinute: 10,
      unknownMinute: 30,
    });
    expect(limitsFor({ plan: 'enterprise', perMinuteOverride: 0, perHourOverride: 0 })).toEqual({
      minute: 100,
      hour: 10_000,
      appHour: 100_000,
      licenseMinute: 60,
      validateKeyMinute: 5000,
      heartbeatMinute: 10,
      unknownMinute: 30,
    });
    expect(limitsFor({ plan: 'pro', perMinuteOverride: 500, perHourOverride: 50_000 })).toEqual({
      minute: 500,
      hour: 50_000,
      appHour: 500_000,
      licenseMinute: 60,
      validateKeyMinute: 25_000,
      heartbeatMinute: 10,
      unknownMinute: 30,
    });
  });

  it('treat an unknown plan as free, never as unlimited', () => {
    expect(limitsFor({ plan: 'mystery', perMinuteOverride: 0, perHourOverride: 0 }).hour).toBe(100);
  });
});

describe('headers', () => {
  it('name both budgets in the policy and the one closest to running out in RateLimit and X-RateLimit-*', () => {
    const h = rateLimitHeaders([w('minute', 100, 57, 33), w('hour', 1000, 900, 1200)], 1_800_000_000);
    expect(h).toEqual({
      'RateLimit-Policy': '"hour";q=1000;w=3600, "minute";q=100;w=60',
      RateLimit: '"minute";r=57;t=33',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '57',
      'X-RateLimit-Reset': String(1_800_000_000 + 33),
    });
  });

  it('name the app allowance first in the policy of a validate-scope key', () => {
    const h = rateLimitHeaders([w('minute', 100, 40, 20), { ...w('hour', 1000, 3, 3000), name: 'app_hour' }], 0);
    expect(h['RateLimit-Policy']).toBe('"app_hour";q=1000;w=3600, "minute";q=100;w=60');
    expect(h.RateLimit).toBe('"app_hour";r=3;t=3000');
  });

  it('pick the hour when it has fewer left, and the later reset on a tie', () => {
    expect(bindingBudget([w('minute', 100, 40, 20), w('hour', 100, 3, 3000)]).name).toBe('hour');
    expect(bindingBudget([w('minute', 100, 0, 20), w('hour', 100, 0, 3000)]).name).toBe('hour');
  });
});

describe('429 detail', () => {
  it('says which budget ran out and when to retry', () => {
    expect(rejectionDetail(w('minute', 100, 0, 12), 'pro')).toBe(
      'the per-minute limit of 100 requests for this API key was reached; retry in 12 s',
    );
    expect(rejectionDetail(w('hour', 100, 0, 1800), 'free')).toBe(
      'the hourly quota of 100 requests for this account (free plan) was reached; retry in 1800 s',
    );
    expect(rejectionDetail({ ...w('hour', 1000, 0, 1800), name: 'app_hour' }, 'free')).toBe(
      'the hourly allowance of 1000 app requests (validate-scope keys and licence credentials) for this account (free plan) was reached; retry in 1800 s',
    );
  });
});
