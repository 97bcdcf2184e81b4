import { Keyring } from '@licensing/runtime';
import { parsePeppers } from '../../src/domain/api-key';
import { mfaKeyring } from '../../src/domain/mfa-keyring';
import {
  base32Decode,
  base32Encode,
  cleanCode,
  cleanRecoveryCode,
  digestRecoveryCode,
  matchTotp,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  stepAt,
  totpCode,
} from '../../src/domain/totp';

// RFC 6238's own test vectors (appendix B, SHA-1) and what the service builds on them: a code is
// right one step either side of now, the secret travels in base32, recovery codes are single-use
// tokens kept as digests, and the secret is sealed under a key derived from API_KEY_PEPPER.

const RFC_SECRET = Buffer.from('12345678901234567890');

describe('TOTP codes (RFC 6238, SHA-1)', () => {
  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('at %i s the 8-digit code is %s, and the 6-digit one its last six digits', (seconds, eight) => {
    const step = stepAt(new Date(seconds * 1000));
    expect(totpCode(RFC_SECRET, step, 8)).toBe(eight);
    expect(totpCode(RFC_SECRET, step)).toBe(eight.slice(2));
  });

  it('matches a code of the step before, this one or the next, and nothing further', () => {
    const secret = base32Encode(RFC_SECRET);
    const now = new Date(1111111109 * 1000);
    const step = stepAt(now);
    for (const d of [-1, 0, 1]) expect(matchTotp(secret, totpCode(RFC_SECRET, step + d), now)).toBe(step + d);
    for (const d of [-2, 2]) expect(matchTotp(secret, totpCode(RFC_SECRET, step + d), now)).toBeNull();
    // As people type it.
    const code = totpCode(RFC_SECRET, step);
    expect(matchTotp(secret, `${code.slice(0, 3)} ${code.slice(3)}`, now)).toBe(step);
    for (const bad of ['', '12345', '1234567', 'abcdef', '12345x']) expect(matchTotp(secret, bad, now)).toBeNull();
  });

  it('round-trips secrets through base32 and refuses what is not base32', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Encode(base32Decode(secret)!)).toBe(secret);
    expect(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ')!.toString()).toBe('12345678901234567890');
    expect(base32Decode('gezd gnbv-gy3t')).toEqual(base32Decode('GEZDGNBVGY3T'));
    expect(base32Decode('not base32!')).toBeNull();
  });

  it('builds the otpauth URI authenticator apps scan, with the account and e-mail escaped', () => {
    const uri = new URL(otpauthUri('Acme & Co', 'ann@example.com', 'JBSWY3DPEHPK3PXP'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Acme & Co:ann@example.com');
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: 'JBSWY3DPEHPK3PXP',
      issuer: 'Acme & Co',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });

  it('cleans typed codes: six digits with spaces, recovery codes whatever their case and dash', () => {
    expect(cleanCode(' 123 456 ')).toBe('123456');
    expect(cleanCode('12345a')).toBeNull();
    expect(cleanRecoveryCode('ABCDE-fghjk')).toBe('abcdefghjk');
    expect(cleanRecoveryCode('abcde-fghj')).toBeNull();
  });
});

describe('recovery codes', () => {
  it('are ten different codes, each kept only as a digest', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const digest = digestRecoveryCode(cleanRecoveryCode(codes[0])!);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest).not.toContain(cleanRecoveryCode(codes[0]));
  });
});

describe('the sealed TOTP secret', () => {
  it('opens under the pepper it was sealed with, also once a new pepper is added first', () => {
    const before = mfaKeyring(parsePeppers('p1:aaaaaaaaaaaaaaaaaaaaaaaa'));
    const sealed = before.seal(Buffer.from('JBSWY3DPEHPK3PXP'));
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    const rotated = mfaKeyring(parsePeppers('p2:bbbbbbbbbbbbbbbbbbbbbbbb,p1:aaaaaaaaaaaaaaaaaaaaaaaa'));
    expect(rotated.open(sealed).toString()).toBe('JBSWY3DPEHPK3PXP');
    expect(rotated.isCurrent(sealed)).toBe(false);
    // A key derived from the pepper, not the pepper itself.
    const plain = Keyring.parse(
      `p1:${Buffer.from('aaaaaaaaaaaaaaaaaaaaaaaa'.padEnd(32, 'a')).toString('base64')}`,
      'x',
    );
    expect(() => plain.open(sealed)).toThrow();
  });

  it('works with a single unversioned pepper', () => {
    const ring = mfaKeyring(parsePeppers('a-single-pepper-of-some-length'));
    expect(ring.open(ring.seal(Buffer.from('SECRET'))).toString()).toBe('SECRET');
  });
});
