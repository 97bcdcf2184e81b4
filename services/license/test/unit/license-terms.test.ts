import { DEFAULT_POLICY, policyRules, type LicenseOverrides } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { storedPolicy as storedPolicyOf } from '../../src/domain/entitlements';
import {
  checkTerms,
  differing,
  effectivePolicy,
  excessMachines,
  keptByRenewal,
  overridesToContract,
  parseTime,
  withTerms,
} from '../../src/domain/overrides';

const now = new Date('2027-01-01T00:00:00.000Z');
const product = { ...DEFAULT_POLICY, duration_days: 30, max_activations: 3, grace_days: 2 };

const refused = (f: () => unknown): AppError => {
  try {
    f();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
};

describe('per-licence terms: the checks of what a request asks', () => {
  it('takes numbers within the policy rule ranges, null, and an ISO 8601 expiry', () => {
    expect(
      checkTerms(
        {
          max_activations: { value: policyRules.max_activations.max },
          lease_seconds: { value: undefined },
          expires_at: '2027-02-01T10:00:00+02:00',
        },
        now,
        true,
      ),
    ).toEqual({
      max_activations: policyRules.max_activations.max,
      lease_seconds: null,
      expires_at: '2027-02-01T08:00:00.000Z',
    });
    expect(checkTerms({ max_activations: undefined, lease_seconds: undefined, expires_at: '' }, now, true)).toEqual({
      expires_at: null,
    });
    expect(checkTerms(undefined, now, true)).toBeUndefined();
    expect(
      checkTerms({ max_activations: undefined, lease_seconds: undefined, expires_at: undefined }, now, true),
    ).toBeUndefined();
  });

  it.each([
    ['max_activations', policyRules.max_activations.min - 1],
    ['max_activations', policyRules.max_activations.max + 1],
    ['lease_seconds', policyRules.lease_seconds.min - 1],
    ['lease_seconds', policyRules.lease_seconds.max + 1],
    ['lease_seconds', 60.5],
  ] as const)('refuses %s %p outside the policy rule, naming the field and its range', (field, value) => {
    const asked: LicenseOverrides = { max_activations: undefined, lease_seconds: undefined, expires_at: undefined };
    asked[field] = { value };
    const err = refused(() => checkTerms(asked, now, false));
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors.map((e) => e.field)).toEqual([field]);
    expect(err.message).toContain(`from ${policyRules[field].min} to ${policyRules[field].max}`);
  });

  it.each(['tomorrow', '2027-02-30T00:00:00Z', '2027-02-01', '2027-02-01T00:00:00'])(
    'refuses an expiry that is not a time: %p',
    (text) => {
      const err = refused(() =>
        checkTerms({ max_activations: undefined, lease_seconds: undefined, expires_at: text }, now, false),
      );
      expect(err.fieldErrors.map((e) => e.field)).toEqual(['expires_at']);
    },
  );

  it('refuses a past expiry for a new licence only', () => {
    const past = { max_activations: undefined, lease_seconds: undefined, expires_at: '2026-12-31T00:00:00Z' };
    expect(refused(() => checkTerms(past, now, true)).message).toMatch(/in the future/);
    expect(checkTerms(past, now, false)).toEqual({ expires_at: '2026-12-31T00:00:00.000Z' });
  });

  it('reads a time only when it is a real one', () => {
    expect(parseTime('2027-01-31T12:00:00Z')).toEqual(new Date('2027-01-31T12:00:00Z'));
    expect(parseTime('2027-13-01T00:00:00Z')).toBeNull();
    expect(parseTime('')).toBeNull();
  });
});

describe('per-licence terms: the effective policy', () => {
  it('puts the numbers of its own over the snapshot, null included, and leaves the rest', () => {
    const snapshot = storedPolicyOf(product);
    expect(effectivePolicy(snapshot, { max_activations: 5 })).toEqual({ ...snapshot, max_activations: 5 });
    expect(effectivePolicy(snapshot, { max_activations: null, lease_seconds: 300 })).toEqual({
      ...snapshot,
      max_activations: null,
      lease_seconds: 300,
    });
    expect(effectivePolicy(snapshot, undefined)).toEqual(snapshot);
    expect(effectivePolicy(snapshot, { expires_at: null })).toEqual(snapshot);
  });

  it('keeps only what differs from the product policy (the expiry always)', () => {
    expect(differing({ max_activations: 3, lease_seconds: 60, expires_at: null }, product)).toEqual({
      lease_seconds: 60,
      expires_at: null,
    });
    expect(differing({ max_activations: null }, product)).toEqual({ max_activations: null });
  });

  it('a renewal keeps the numbers and drops the expiry of its own', () => {
    expect(keptByRenewal({ max_activations: 5, lease_seconds: null, expires_at: now })).toEqual({
      max_activations: 5,
      lease_seconds: null,
    });
    expect(keptByRenewal(undefined)).toEqual({});
  });

  it('shows them in the contract: null as a number without value, the expiry as RFC 3339 or empty', () => {
    expect(overridesToContract({ max_activations: 5, lease_seconds: null, expires_at: now })).toEqual({
      max_activations: { value: 5 },
      lease_seconds: { value: undefined },
      expires_at: now.toISOString(),
    });
    expect(overridesToContract({ expires_at: null })).toMatchObject({ expires_at: '' });
    expect(overridesToContract(undefined)).toEqual({
      max_activations: undefined,
      lease_seconds: undefined,
      expires_at: undefined,
    });
  });
});

describe('per-licence terms: a licence given them', () => {
  const licence = {
    status: 'active' as const,
    expires_at: new Date(now.getTime() + 30 * 86_400_000),
    policy: storedPolicyOf(product),
    subscription: undefined,
    expired_notified: false,
  };

  it('holds the numbers asked, records those that differ, and keeps its expiry when none is asked', () => {
    const next = withTerms(licence, { max_activations: 5, lease_seconds: null }, product, now);
    expect(next.policy).toEqual({ ...licence.policy, max_activations: 5 });
    expect(next.overrides).toEqual({ max_activations: 5 });
    expect(next).not.toHaveProperty('expires_at');
  });

  it('drops an override set back to the product policy value', () => {
    const overridden = {
      ...licence,
      policy: { ...licence.policy, max_activations: 5 },
      overrides: { max_activations: 5 },
    };
    const next = withTerms(overridden, { max_activations: 3 }, product, now);
    expect(next.policy.max_activations).toBe(3);
    expect(next.overrides).toEqual({});
  });

  it('an expiry of its own moves its grace and its expiry bucket, and may be perpetual', () => {
    const at = '2027-03-01T00:00:00.000Z';
    const next = withTerms(licence, { expires_at: at }, product, now);
    expect(next.expires_at).toEqual(new Date(at));
    expect(next.grace_ends_at).toEqual(new Date(Date.parse(at) + 2 * 86_400_000));
    expect(next.expiry_bucket).toBe(new Date(Date.parse(at) + 2 * 86_400_000).toISOString().slice(0, 13));
    expect(next.overrides).toEqual({ expires_at: new Date(at) });
    const perpetual = withTerms(licence, { expires_at: null }, product, now);
    expect(perpetual).toMatchObject({ expires_at: null, grace_ends_at: null, expiry_bucket: null });
    expect(perpetual.overrides).toEqual({ expires_at: null });
  });
});

describe('per-licence terms: the machines freed when the limit is lowered', () => {
  const at = (minute: number) => new Date(now.getTime() + minute * 60_000);
  const machines = [
    { _id: 'act_a', created_at: at(0), last_seen_at: at(50) },
    { _id: 'act_b', created_at: at(1), last_seen_at: null }, // never seen since it was activated at minute 1
    { _id: 'act_c', created_at: at(2), last_seen_at: at(10) },
    { _id: 'act_d', created_at: at(3), last_seen_at: at(40) },
  ];

  it('frees the longest-unseen until they fit (never seen: since activation)', () => {
    expect(excessMachines(machines, 2).map((m) => m._id)).toEqual(['act_b', 'act_c']);
    expect(excessMachines(machines, 1).map((m) => m._id)).toEqual(['act_b', 'act_c', 'act_d']);
  });

  it('frees none when they fit or there is no limit', () => {
    expect(excessMachines(machines, 4)).toEqual([]);
    expect(excessMachines(machines, null)).toEqual([]);
  });

  it('on a tie, frees the older activation', () => {
    const tie = [
      { _id: 'act_new', created_at: at(5), last_seen_at: at(20) },
      { _id: 'act_old', created_at: at(4), last_seen_at: at(20) },
    ];
    expect(excessMachines(tie, 1).map((m) => m._id)).toEqual(['act_old']);
  });
});
