import fc from 'fast-check';
import {
  DAY_MS,
  effectiveEntitlements,
  entitlementsFromText,
  entitlementsProblem,
  isEntitlementCode,
  judge,
  MAX_ENTITLEMENTS,
  missingEntitlements,
  withPolicyDefaults,
  type LicenseFacts,
} from '@licensing/proto';
import { readBody } from '../../src/request-shapes/shapes';
import { keyValidationRequest, licenseUpdate } from '../../src/request-shapes/operations';

// The pure parts of entitlements (proto/rules/entitlements.ts): what a code is, what a list of them
// may be, the effective set, and where the check stands in the verdict's order.

describe('an entitlement code', () => {
  it.each(['a', '0', 'pdf-export', 'seats.10', 'beta_ui', 'a'.repeat(64), '9-._'])('%s is one', (code) => {
    expect(isEntitlementCode(code)).toBe(true);
  });

  it.each(['', 'A', 'Pdf', '-x', '.x', '_x', 'a b', 'a/b', 'é', 'a'.repeat(65), 'a\n', ' a'])('%j is not', (code) => {
    expect(isEntitlementCode(code)).toBe(false);
  });

  it('is never anything but a string', () => {
    for (const v of [1, null, undefined, ['a'], { a: 1 }, true]) expect(isEntitlementCode(v)).toBe(false);
  });
});

describe('a list of codes', () => {
  it('is good up to 100 distinct codes, [] included', () => {
    expect(entitlementsProblem('e', [])).toBeUndefined();
    const most = Array.from({ length: MAX_ENTITLEMENTS }, (_, i) => `c${i}`);
    expect(entitlementsProblem('e', most)).toBeUndefined();
    expect(entitlementsProblem('e', [...most, 'one-more'])).toEqual({
      field: 'e',
      message: 'e may name at most 100 entitlements',
    });
  });

  it('names the field, the place and the code that is wrong', () => {
    expect(entitlementsProblem('policy.entitlements', ['ok', 'Not OK'])).toEqual({
      field: 'policy.entitlements[1]',
      message:
        'policy.entitlements[1] "Not OK" is not an entitlement code (a-z, 0-9, then also _ . -; at most 64 characters)',
    });
    expect(entitlementsProblem('entitlements', ['a', 'b', 'a'])).toEqual({
      field: 'entitlements',
      message: 'entitlements names "a" twice',
    });
    expect(entitlementsProblem('entitlements', [3])?.message).toContain('entitlements[0] 3 is not');
    for (const notAList of ['a', null, { 0: 'a' }])
      expect(entitlementsProblem('entitlements', notAList)).toEqual({
        field: 'entitlements',
        message: 'entitlements must be a list of entitlement codes',
      });
    // A long bad code is cut in the message.
    expect(entitlementsProblem('e', ['X'.repeat(5000)])!.message.length).toBeLessThan(200);
  });

  it('is read from a form: commas, spaces and line breaks separate, empty pieces are dropped', () => {
    expect(entitlementsFromText(' pdf-export, sync\n\nbeta_ui\t,  ')).toEqual(['pdf-export', 'sync', 'beta_ui']);
    expect(entitlementsFromText('')).toEqual([]);
    expect(entitlementsFromText(' , \n')).toEqual([]);
  });

  it('is checked by the REST shapes of a licence update and a validation the same way', () => {
    const body = (b: unknown) => ({ body: b }) as Parameters<typeof readBody>[0];
    expect(readBody(body({ entitlements: ['a', 'b'] }), licenseUpdate).entitlements).toEqual(['a', 'b']);
    expect(readBody(body({ key: 'K', entitlements: [] }), keyValidationRequest).entitlements).toEqual([]);
    for (const bad of [['A'], ['a', 'a'], 'a', [1], null, Array.from({ length: 101 }, (_, i) => `c${i}`)]) {
      expect(() => readBody(body({ entitlements: bad }), licenseUpdate)).toThrow(/entitlement/);
      expect(() => readBody(body({ key: 'K', entitlements: bad }), keyValidationRequest)).toThrow(/entitlement/);
    }
  });
});

describe('the effective set', () => {
  it('is the policy’s and the licence’s own, sorted, each once', () => {
    expect(effectiveEntitlements(['sync', 'pdf'], ['beta', 'sync'])).toEqual(['beta', 'pdf', 'sync']);
    expect(effectiveEntitlements(['b', 'a'], undefined)).toEqual(['a', 'b']);
    expect(effectiveEntitlements(undefined, ['z'])).toEqual(['z']);
    expect(effectiveEntitlements(undefined, undefined)).toEqual([]);
  });

  it('holds every code of both and nothing else, whatever they are (property)', () => {
    const codes = fc.array(fc.constantFrom('a', 'b', 'c', 'pdf-export', 'z.9', '0'), { maxLength: 8 });
    fc.assert(
      fc.property(codes, codes, (policy, extras) => {
        const set = effectiveEntitlements(policy, extras);
        expect([...set].sort()).toEqual(set);
        expect(new Set(set).size).toBe(set.length);
        expect(new Set(set)).toEqual(new Set([...policy, ...extras]));
        expect(missingEntitlements([...policy, ...extras], policy, extras)).toEqual([]);
      }),
    );
  });

  it('a policy stored before entitlements existed has none; a list is never shared with its source', () => {
    expect(withPolicyDefaults({ grace_days: 1 }).entitlements).toEqual([]);
    const stored = { entitlements: ['a'] };
    const policy = withPolicyDefaults(stored);
    policy.entitlements.push('b');
    expect(stored.entitlements).toEqual(['a']);
  });

  it('missing: the codes asked for that it lacks, in the order asked', () => {
    expect(missingEntitlements(['x', 'a', 'y'], ['a'], ['b'])).toEqual(['x', 'y']);
    expect(missingEntitlements(['b'], ['a'], ['b'])).toEqual([]);
    expect(missingEntitlements([], undefined, undefined)).toEqual([]);
  });
});

describe('the verdict', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const ok = { ok: true as const, key: 'K' };
  const license = (over: Partial<LicenseFacts> = {}, policy: Record<string, unknown> = {}): LicenseFacts => ({
    account_id: 'acct_a',
    product_id: 'prod_1',
    status: 'active',
    expires_at: null,
    policy: withPolicyDefaults({ entitlements: ['pdf-export', 'sync'], ...policy }),
    extra_entitlements: ['beta'],
    ...over,
  });
  const ask = (entitlements: string[], fingerprint = '') => ({
    accountId: 'acct_a',
    productId: '',
    fingerprint,
    entitlements,
  });
  const noActivation = { fingerprintActive: false, count: 0 };

  it('is valid when everything asked for is in the policy or the licence’s own', () => {
    expect(judge(ok, license(), ask(['sync', 'beta']), noActivation, now)).toMatchObject({
      valid: true,
      code: 'valid',
    });
    expect(judge(ok, license({ extra_entitlements: undefined }), ask([]), noActivation, now).code).toBe('valid');
  });

  it('answers entitlements_missing, naming what is missing, with contact_vendor, not to be trusted offline', () => {
    const v = judge(ok, license(), ask(['sync', 'sso', 'team-admin']), noActivation, now);
    expect(v).toMatchObject({
      valid: false,
      code: 'entitlements_missing',
      nextAction: 'contact_vendor',
      detail: 'the licence does not include the entitlements sso, team-admin',
      visible: true,
    });
    expect(v.cacheUntil.getTime()).toBe(now.getTime());
    expect(judge(ok, license(), ask(['sso']), noActivation, now).detail).toBe(
      'the licence does not include the entitlement sso',
    );
  });

  it('comes after product, status, expiry and activation, and before grace', () => {
    const missing = ask(['sso']);
    expect(judge(ok, license(), { ...missing, productId: 'prod_2' }, noActivation, now).code).toBe('product_mismatch');
    expect(judge(ok, license({ status: 'revoked' }), missing, noActivation, now).code).toBe('revoked');
    expect(judge(ok, license({ status: 'suspended' }), missing, noActivation, now).code).toBe('suspended');
    expect(judge(ok, license({ expires_at: new Date(0) }), missing, noActivation, now).code).toBe('expired');
    const activated = license({}, { require_activation: true, max_activations: 1 });
    expect(judge(ok, activated, ask(['sso'], 'm1'), { fingerprintActive: false, count: 0 }, now).code).toBe(
      'not_activated',
    );
    expect(judge(ok, activated, ask(['sso'], 'm2'), { fingerprintActive: false, count: 1 }, now).code).toBe(
      'activation_limit_reached',
    );
    expect(judge(ok, activated, ask(['sso'], 'm1'), { fingerprintActive: true, count: 1 }, now).code).toBe(
      'entitlements_missing',
    );
    // In its grace days a licence lacking a code is refused; with everything it needs it is in grace.
    const inGrace = license({ expires_at: new Date(now.getTime() - DAY_MS) }, { grace_days: 3 });
    expect(judge(ok, inGrace, missing, noActivation, now).code).toBe('entitlements_missing');
    expect(judge(ok, inGrace, ask(['sync']), noActivation, now).code).toBe('expired_in_grace');
  });
});
