import { judge, type LicenseFacts } from '../../services/license/src/domain/validation';

const now = new Date('2026-06-01T00:00:00Z');
const ok = { ok: true as const, key: 'K' };
const license = (over: Partial<LicenseFacts> = {}): LicenseFacts => ({ account_id: 'acct_a', product_id: 'prod_1', status: 'active', expires_at: null, ...over });
const req = (over = {}) => ({ accountId: 'acct_a', productId: '', ...over });

describe('validation rules, in their documented order', () => {
  it('a typo is reported before anything else, and the licence stays hidden', () => {
    expect(judge({ ok: false, reason: 'checksum' }, null, req(), now)).toMatchObject({ valid: false, code: 'not_found', visible: false, detail: expect.stringContaining('typo') });
    expect(judge({ ok: false, reason: 'format' }, null, req(), now)).toMatchObject({ code: 'not_found', visible: false });
  });

  it('another account’s licence is not found, even with a matching product', () => {
    expect(judge(ok, license({ account_id: 'acct_b' }), req({ productId: 'prod_1' }), now)).toMatchObject({ valid: false, code: 'not_found', visible: false });
  });

  it('product mismatch comes before status and expiry', () => {
    expect(judge(ok, license({ status: 'revoked', expires_at: new Date(0) }), req({ productId: 'prod_2' }), now)).toMatchObject({ code: 'product_mismatch', visible: true });
  });

  it('revoked, then suspended, then expired', () => {
    expect(judge(ok, license({ status: 'revoked', expires_at: new Date(0) }), req(), now).code).toBe('revoked');
    expect(judge(ok, license({ status: 'suspended', expires_at: new Date(0) }), req(), now).code).toBe('suspended');
    expect(judge(ok, license({ expires_at: new Date(now.getTime()) }), req(), now).code).toBe('expired');
    expect(judge(ok, license({ expires_at: new Date(now.getTime() + 1) }), req(), now)).toMatchObject({ valid: true, code: 'valid' });
  });

  it('a perpetual active licence of the caller is valid, with or without product', () => {
    expect(judge(ok, license(), req(), now)).toEqual({ valid: true, code: 'valid', detail: expect.any(String), visible: true });
    expect(judge(ok, license(), req({ productId: 'prod_1' }), now).valid).toBe(true);
  });
});
