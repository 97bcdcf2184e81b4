import fc from 'fast-check';
import {
  DAY_MS,
  effectiveStatus,
  expirationStrategies,
  inGrace,
  judge,
  MAX_OFFLINE_MS,
  nextStatusChange,
  type LicenseFacts,
  type PolicySnapshot,
} from '@licensing/proto';

const now = new Date('2026-06-01T00:00:00Z');
const ok = { ok: true as const, key: 'K' };
const policy = (over: Partial<PolicySnapshot> = {}): PolicySnapshot => ({
  duration_days: null,
  max_activations: null,
  grace_days: 0,
  require_activation: false,
  validate_keys_see_email: false,
  ...over,
});
const license = (over: Partial<LicenseFacts> = {}): LicenseFacts => ({
  account_id: 'acct_a',
  product_id: 'prod_1',
  status: 'active',
  expires_at: null,
  policy: policy(),
  ...over,
});
const req = (over = {}) => ({ accountId: 'acct_a', productId: '', fingerprint: '', ...over });
const noActivation = { fingerprintActive: false, count: 0 };
const at = (days: number) => new Date(now.getTime() + days * DAY_MS);

describe('validation rules, in their documented order', () => {
  it('a typo is reported before anything else, and the licence stays hidden', () => {
    expect(judge({ ok: false, reason: 'checksum' }, null, req(), noActivation, now)).toMatchObject({
      valid: false,
      code: 'not_found',
      visible: false,
      detail: expect.stringContaining('typo'),
    });
    expect(judge({ ok: false, reason: 'format' }, null, req(), noActivation, now)).toMatchObject({
      code: 'not_found',
      visible: false,
    });
  });

  it('another account’s licence is not found, even with a matching product', () => {
    expect(judge(ok, license({ account_id: 'acct_b' }), req({ productId: 'prod_1' }), noActivation, now)).toMatchObject(
      { valid: false, code: 'not_found', visible: false },
    );
  });

  it('product mismatch comes before status and expiry', () => {
    expect(
      judge(
        ok,
        license({ status: 'revoked', expires_at: new Date(0) }),
        req({ productId: 'prod_2' }),
        noActivation,
        now,
      ),
    ).toMatchObject({ code: 'product_mismatch', visible: true });
  });

  it('revoked, then suspended, then expired, each with what to do next', () => {
    expect(judge(ok, license({ status: 'revoked', expires_at: new Date(0) }), req(), noActivation, now)).toMatchObject({
      code: 'revoked',
      nextAction: 'contact_vendor',
    });
    expect(
      judge(ok, license({ status: 'suspended', expires_at: new Date(0) }), req(), noActivation, now),
    ).toMatchObject({ code: 'suspended', nextAction: 'contact_vendor' });
    expect(judge(ok, license({ expires_at: now }), req(), noActivation, now)).toMatchObject({
      valid: false,
      code: 'expired',
      nextAction: 'renew',
      cacheUntil: now,
    });
  });

  it('in the grace days a licence is valid as expired_in_grace, trusted until grace ends at most', () => {
    const l = license({ expires_at: at(-1), policy: policy({ duration_days: 30, grace_days: 3 }) });
    expect(judge(ok, l, req(), noActivation, now)).toEqual({
      valid: true,
      code: 'expired_in_grace',
      detail: expect.any(String),
      nextAction: 'renew',
      cacheUntil: new Date(now.getTime() + MAX_OFFLINE_MS),
      visible: true,
    });
    expect(judge(ok, l, req(), noActivation, at(1.5)).cacheUntil).toEqual(at(2));
    expect(judge(ok, l, req(), noActivation, at(2)).code).toBe('expired');
  });

  it('require_activation: not_activated says activate; a full licence says activation_limit_reached and free_a_seat', () => {
    const l = license({ policy: policy({ require_activation: true, max_activations: 2 }) });
    expect(judge(ok, l, req(), { fingerprintActive: false, count: 0 }, now)).toMatchObject({
      valid: false,
      code: 'not_activated',
      nextAction: 'activate',
      detail: expect.stringContaining('send its fingerprint'),
    });
    expect(judge(ok, l, req({ fingerprint: 'm1' }), { fingerprintActive: false, count: 2 }, now)).toMatchObject({
      code: 'activation_limit_reached',
      nextAction: 'free_a_seat',
    });
    expect(judge(ok, l, req({ fingerprint: 'm1' }), { fingerprintActive: true, count: 2 }, now)).toMatchObject({
      valid: true,
      code: 'valid',
    });
  });

  it('expiry is checked before activation', () => {
    const l = license({ expires_at: at(-1), policy: policy({ require_activation: true, duration_days: 10 }) });
    expect(judge(ok, l, req(), noActivation, now).code).toBe('expired');
  });

  it('a valid answer may be trusted offline for a day, or until expiry if sooner', () => {
    expect(judge(ok, license(), req(), noActivation, now)).toEqual({
      valid: true,
      code: 'valid',
      detail: expect.any(String),
      nextAction: 'none',
      cacheUntil: new Date(now.getTime() + MAX_OFFLINE_MS),
      visible: true,
    });
    expect(
      judge(ok, license({ expires_at: new Date(now.getTime() + 3600_000) }), req(), noActivation, now).cacheUntil,
    ).toEqual(new Date(now.getTime() + 3600_000));
  });
});

describe("after expiry, as the policy's expiration_strategy says", () => {
  const expiring = (strategy: string | undefined, grace = 0) =>
    license({
      expires_at: at(-1),
      policy: policy({ duration_days: 30, grace_days: grace, expiration_strategy: strategy as 'restrict' }),
    });

  it('restrict (and no strategy: a licence stored before it existed, or an empty one) answers expired as before', () => {
    for (const strategy of ['restrict', undefined, '']) {
      const l = expiring(strategy);
      expect(effectiveStatus(l, now)).toBe('expired');
      expect(judge(ok, l, req(), noActivation, now)).toEqual({
        valid: false,
        code: 'expired',
        detail: 'the licence has expired',
        nextAction: 'renew',
        cacheUntil: now,
        visible: true,
      });
    }
  });

  it('maintain_access answers expired and renew, saying the releases published before the expiry stay available', () => {
    const l = expiring('maintain_access');
    expect(effectiveStatus(l, now)).toBe('expired');
    expect(judge(ok, l, req(), noActivation, now)).toEqual({
      valid: false,
      code: 'expired',
      detail: `the licence has expired; releases published before ${at(-1).toISOString()} stay available`,
      nextAction: 'renew',
      cacheUntil: now,
      visible: true,
    });
    // Before the end of grace nothing differs from restrict.
    const inItsGrace = expiring('maintain_access', 3);
    expect(judge(ok, inItsGrace, req(), noActivation, now)).toEqual(
      judge(ok, expiring('restrict', 3), req(), noActivation, now),
    );
  });

  it('revoke_access answers revoked from the very moment the licence would have expired: its expiry plus grace', () => {
    const l = license({
      expires_at: now,
      policy: policy({ duration_days: 30, grace_days: 2, expiration_strategy: 'revoke_access' }),
    });
    const justBefore = new Date(at(2).getTime() - 1);
    expect(effectiveStatus(l, justBefore)).toBe('active');
    expect(judge(ok, l, req(), noActivation, justBefore)).toMatchObject({ valid: true, code: 'expired_in_grace' });
    expect(nextStatusChange(l, justBefore)).toBe(at(2).getTime());
    expect(effectiveStatus(l, at(2))).toBe('revoked');
    expect(inGrace(l, at(2))).toBe(false);
    // The same answer as a licence stored revoked, so the expiry sweep's write changes nothing an app sees.
    const answer = judge(ok, l, req(), noActivation, at(2));
    expect(answer).toEqual(judge(ok, { ...l, status: 'revoked' }, req(), noActivation, at(2)));
    expect(answer).toMatchObject({ valid: false, code: 'revoked', nextAction: 'contact_vendor' });
    expect(nextStatusChange(l, at(2))).toBe(Number.POSITIVE_INFINITY);
    // Without grace, at the expiry itself; a suspended licence stays suspended.
    expect(effectiveStatus({ ...l, policy: { ...l.policy, grace_days: 0 } }, now)).toBe('revoked');
    expect(effectiveStatus({ ...l, status: 'suspended' }, at(5))).toBe('suspended');
  });
});

describe('answers hold for the rest of their second, until the status changes with time', () => {
  it('counts cache_until from the start of the second', () => {
    const t = new Date('2026-06-01T10:42:13.734Z');
    expect(judge(ok, license(), req(), noActivation, t).cacheUntil.toISOString()).toBe('2026-06-02T10:42:13.000Z');
    expect(judge(ok, license({ status: 'revoked' }), req(), noActivation, t).cacheUntil.toISOString()).toBe(
      '2026-06-01T10:42:13.000Z',
    );
    // An expiry keeps its own precision.
    const expiresAt = new Date('2026-06-01T11:00:00.250Z');
    expect(judge(ok, license({ expires_at: expiresAt }), req(), noActivation, t).cacheUntil).toEqual(expiresAt);
  });

  it('nextStatusChange: the expiry, then the end of grace, then never', () => {
    const l = license({ expires_at: at(1), policy: policy({ grace_days: 2 }) });
    expect(nextStatusChange(l, now)).toBe(at(1).getTime());
    expect(nextStatusChange(l, at(1))).toBe(at(3).getTime());
    expect(nextStatusChange(l, at(3))).toBe(Number.POSITIVE_INFINITY);
    expect(nextStatusChange(license(), now)).toBe(Number.POSITIVE_INFINITY);
    expect(nextStatusChange(license({ status: 'suspended', expires_at: at(1) }), now)).toBe(Number.POSITIVE_INFINITY);
  });

  it('judges alike at every moment before the next change within the second, and differently at it', () => {
    const facts = fc.record({
      status: fc.constantFrom('active', 'suspended', 'revoked') as fc.Arbitrary<LicenseFacts['status']>,
      expiresIn: fc.option(fc.integer({ min: -5 * DAY_MS, max: 5 * DAY_MS })),
      graceDays: fc.integer({ min: 0, max: 3 }),
      strategy: fc.constantFrom(...expirationStrategies),
      requireActivation: fc.boolean(),
      active: fc.boolean(),
    });
    fc.assert(
      fc.property(facts, fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 999 }), (f, startMs, laterMs) => {
        const t0 = new Date(now.getTime() + startMs);
        const l = license({
          status: f.status,
          expires_at: f.expiresIn === null ? null : new Date(now.getTime() + f.expiresIn),
          policy: policy({
            grace_days: f.graceDays,
            require_activation: f.requireActivation,
            expiration_strategy: f.strategy,
          }),
        });
        const activation = { fingerprintActive: f.active, count: 1 };
        const until = Math.min(now.getTime() + 1000, nextStatusChange(l, t0));
        const t1 = new Date(Math.min(until - 1, t0.getTime() + laterMs));
        if (t1 < t0) return;
        const same = (t: Date) => ({
          ...judge(ok, l, req({ fingerprint: 'm' }), activation, t),
          status: effectiveStatus(l, t),
        });
        expect(same(t1)).toEqual(same(t0));
        // At the change itself the licence has expired, or its grace has ended (the answer may still be
        // the same: an unactivated machine is refused either way).
        const state = (t: Date) => [effectiveStatus(l, t), inGrace(l, t)];
        if (until < now.getTime() + 1000) expect(state(new Date(until))).not.toEqual(state(t0));
      }),
      { numRuns: 3000 },
    );
  });
});
