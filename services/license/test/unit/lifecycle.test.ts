import { AppError } from '@licensing/runtime';
import {
  allowedActions,
  DAY_MS,
  effectiveStatus,
  inGrace,
  licenseActions,
  storedLicenseStatuses,
  storedStatusOf,
  type LicenseState,
  type PolicySnapshot,
} from '@licensing/proto';
import { transition } from '../../src/domain/lifecycle';

const now = new Date('2026-06-01T00:00:00Z');
const days = (n: number) => new Date(now.getTime() + n * DAY_MS);
const monthly: PolicySnapshot = {
  duration_days: 30,
  max_activations: null,
  grace_days: 5,
  require_activation: false,
  validate_keys_see_email: false,
};
const perpetual: PolicySnapshot = { ...monthly, duration_days: null, grace_days: 0 };
const lic = (over: Partial<LicenseState> = {}): LicenseState => ({
  status: 'active',
  expires_at: days(10),
  policy: monthly,
  ...over,
});

describe('licence states', () => {
  it('expired is derived from expiry plus grace, and only for active licences', () => {
    expect(effectiveStatus(lic(), now)).toBe('active');
    expect(effectiveStatus(lic({ expires_at: days(-3) }), now)).toBe('active');
    expect(inGrace(lic({ expires_at: days(-3) }), now)).toBe(true);
    expect(effectiveStatus(lic({ expires_at: days(-5) }), now)).toBe('expired');
    expect(effectiveStatus(lic({ expires_at: days(-50), status: 'suspended' }), now)).toBe('suspended');
    expect(effectiveStatus(lic({ expires_at: null, policy: perpetual }), days(10_000))).toBe('active');
  });
});

describe('transitions', () => {
  it('suspend, reinstate and revoke move between the stored states', () => {
    expect(transition(lic(), 'suspend', now, monthly).status).toBe('suspended');
    expect(transition(lic({ status: 'suspended' }), 'reinstate', now, monthly).status).toBe('active');
    expect(transition(lic({ status: 'suspended' }), 'revoke', now, monthly).status).toBe('revoked');
  });

  it.each([
    ['reinstate', 'revoked', 'revocation is final'],
    ['reinstate', 'active', 'not suspended'],
    ['suspend', 'suspended', 'already suspended'],
    ['suspend', 'revoked', 'cannot be suspended'],
    ['revoke', 'revoked', 'already revoked'],
    ['renew', 'revoked', 'cannot be renewed'],
  ] as const)('refuses to %s a %s licence with a 409 that says why', (action, status, why) => {
    try {
      transition(lic({ status }), action, now, monthly);
      throw new Error('allowed');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('conflict');
      expect((err as AppError).message).toContain(why);
    }
  });

  it('renew extends from the expiry while it is ahead, and from now once it has passed', () => {
    expect(transition(lic({ expires_at: days(10) }), 'renew', now, monthly).expires_at).toEqual(days(40));
    expect(transition(lic({ expires_at: days(-20) }), 'renew', now, monthly).expires_at).toEqual(days(30));
  });

  it('a licence revoked at the end of its grace (revoke_access) is refused as a revoked one, before the sweep stores it so', () => {
    const revoking = lic({ expires_at: days(-5), policy: { ...monthly, expiration_strategy: 'revoke_access' } });
    expect(effectiveStatus(revoking, now)).toBe('revoked');
    for (const action of licenseActions) expect(() => transition(revoking, action, now, monthly)).toThrow(AppError);
    expect(() => transition(revoking, 'renew', now, monthly)).toThrow('a revoked licence cannot be renewed');
    // Still in its grace, it is an active licence like any other.
    const withinGrace = { ...revoking, expires_at: days(-4) };
    expect(transition(withinGrace, 'renew', now, monthly).expires_at).toEqual(days(30));
  });

  it('renew takes the product’s current policy', () => {
    const yearly = { ...monthly, duration_days: 365, grace_days: 0 };
    const renewed = transition(lic({ expires_at: days(-1) }), 'renew', now, yearly);
    expect(renewed).toEqual({ status: 'active', expires_at: days(365), policy: yearly });
    expect(() => transition(lic({ expires_at: null, policy: perpetual }), 'renew', now, perpetual)).toThrow(
      /perpetual/,
    );
  });
});

describe('the actions a licence allows (what the dashboard offers)', () => {
  it.each([
    ['active', days(10), 30, ['suspend', 'revoke', 'renew']],
    ['active', null, null, ['suspend', 'revoke']],
    ['active', null, 30, ['suspend', 'revoke', 'renew']], // a perpetual licence whose product now expires
    ['suspended', days(10), 30, ['reinstate', 'revoke', 'renew']],
    ['revoked', days(10), 30, []],
  ] as const)('a %s licence expiring %s, its product lasting %s days: %j', (status, expires_at, duration, actions) => {
    const product = duration === null ? perpetual : monthly;
    expect(allowedActions({ status, expires_at }, product)).toEqual(actions);
  });

  it('are exactly those the licence service carries out, for every stored state and action', () => {
    for (const status of storedLicenseStatuses)
      for (const expires_at of [days(10), days(-50), null])
        for (const product of [monthly, perpetual]) {
          const l = lic({ status, expires_at, policy: expires_at ? monthly : perpetual });
          const carriedOut = licenseActions.filter((action) => {
            try {
              transition(l, action, now, product);
              return true;
            } catch {
              return false;
            }
          });
          expect([status, expires_at, product.duration_days, allowedActions(l, product)]).toEqual([
            status,
            expires_at,
            product.duration_days,
            carriedOut,
          ]);
        }
  });

  it('an expired licence allows what its stored state, active, allows', () => {
    const expired = lic({ expires_at: days(-50) });
    expect(effectiveStatus(expired, now)).toBe('expired');
    expect(storedStatusOf('expired')).toBe('active');
    expect(allowedActions({ status: storedStatusOf('expired'), expires_at: expired.expires_at }, monthly)).toEqual([
      'suspend',
      'revoke',
      'renew',
    ]);
  });
});
