import { digestApiKey, generateApiKey, parseApiKey, visiblePrefix } from '../../src/domain/api-key';

describe('API key format', () => {
  it('carries the scope in its prefix, 256 random bits and a checksum', () => {
    const full = generateApiKey('full');
    const val = generateApiKey('validate');
    expect(full.secret).toMatch(/^lk_full_[0-9A-Za-z]{49}$/);
    expect(val.secret).toMatch(/^lk_val_[0-9A-Za-z]{49}$/);
    expect(parseApiKey(full.secret)).toEqual({ scope: 'full' });
    expect(parseApiKey(val.secret)).toEqual({ scope: 'validate' });
    expect(full.visiblePrefix).toBe(full.secret.slice(0, 12));
    expect(visiblePrefix(val.secret)).toBe(val.secret.slice(0, 11));
  });

  it('refuses a key with any one character changed before any look-up', () => {
    const { secret } = generateApiKey('full');
    for (let i = 8; i < secret.length; i++) {
      const c = secret[i] === 'a' ? 'b' : 'a';
      expect(parseApiKey(secret.slice(0, i) + c + secret.slice(i + 1))).toBeNull();
    }
  });

  it('refuses a changed scope prefix (the checksum covers it)', () => {
    const { secret } = generateApiKey('validate');
    const promoted = `lk_full_${secret.slice('lk_val_'.length)}`; // same random part and checksum, wider scope
    expect(promoted).toMatch(/^lk_full_[0-9A-Za-z]{49}$/); // the right shape: only the checksum can refuse it
    expect(parseApiKey(promoted)).toBeNull();
  });

  it.each([[''], ['lk_full_'], ['Bearer x'], [`lk_admin_${'a'.repeat(49)}`], ['x'.repeat(500)]])('refuses %p', (s) => {
    expect(parseApiKey(s)).toBeNull();
  });

  it('keeps only a keyed digest: same key and pepper give the same digest, another pepper another', () => {
    const { secret } = generateApiKey('full');
    expect(digestApiKey(secret, 'p1')).toBe(digestApiKey(secret, 'p1'));
    expect(digestApiKey(secret, 'p1')).not.toBe(digestApiKey(secret, 'p2'));
    expect(digestApiKey(secret, 'p1')).toMatch(/^[0-9a-f]{64}$/);
    expect(digestApiKey(secret, 'p1')).not.toContain(secret.slice(8, 20));
  });
});
