import { ALPHABET, generateLicenseKey, parseLicenseKey } from '@licensing/proto';

describe('licence key format', () => {
  it('generates six groups of five Crockford characters that parse back to themselves', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateLicenseKey();
      expect(key).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
      expect(parseLicenseKey(key)).toEqual({ ok: true, key });
    }
  });

  it('never repeats (140 random bits)', () => {
    const keys = new Set(Array.from({ length: 5000 }, generateLicenseKey));
    expect(keys.size).toBe(5000);
  });

  it('catches every single-character substitution', () => {
    const key = generateLicenseKey().replace(/-/g, '');
    for (let i = 0; i < key.length; i++) {
      for (const c of ALPHABET) {
        if (c === key[i]) continue;
        const typo = key.slice(0, i) + c + key.slice(i + 1);
        expect(parseLicenseKey(typo)).toEqual({ ok: false, reason: 'checksum' });
      }
    }
  });

  it('catches every swap of two different characters', () => {
    const key = generateLicenseKey().replace(/-/g, '');
    for (let i = 0; i < key.length; i++) {
      for (let j = i + 1; j < key.length; j++) {
        if (key[i] === key[j]) continue;
        const chars = [...key];
        [chars[i], chars[j]] = [chars[j], chars[i]];
        expect(parseLicenseKey(chars.join('')).ok).toBe(false);
      }
    }
  });

  it('ignores case, spaces around, hyphens and the aliases O→0, I/L→1', () => {
    const key = generateLicenseKey();
    const aliased = key.replace(/0/g, 'o').replace(/1/g, 'i');
    expect(parseLicenseKey(`  ${aliased.toLowerCase()} `)).toEqual({ ok: true, key });
    expect(parseLicenseKey(key.replace(/-/g, ''))).toEqual({ ok: true, key });
  });

  it.each([[''], ['ABC'], ['U'.repeat(30)], ['!'.repeat(30)], ['A'.repeat(65)], ['ABCDE-ABCDE']])(
    'refuses %p as a format error',
    (input) => {
      expect(parseLicenseKey(input)).toEqual({ ok: false, reason: 'format' });
    },
  );
});
