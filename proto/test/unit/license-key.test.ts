import fc from 'fast-check';
import {
  ALPHABET,
  foreignKeyEntropyBits,
  generateLicenseKey,
  judge,
  parseLicenseKey,
  parseNativeKey,
  weakForeignCredential,
} from '@licensing/proto';

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

  it.each([[''], ['ABC'], ['!'.repeat(30)], ['A'.repeat(65)], ['a b c d e f g h'], ['ABCDE/ABCDE']])(
    'refuses %p as a format error',
    (input) => {
      expect(parseLicenseKey(input)).toEqual({ ok: false, reason: 'format' });
    },
  );

  it.each([[''], ['ABC'], ['U'.repeat(30)], ['!'.repeat(30)], ['A'.repeat(65)], ['ABCDE-ABCDE']])(
    'the native reading refuses %p as a format error',
    (input) => {
      expect(parseNativeKey(input)).toEqual({ ok: false, reason: 'format' });
    },
  );
});

// The plain-ASCII reading of a key (one pass, no strings built) must answer exactly as the general
// reading that trims and upper-cases as Unicode does: here the general reading, written from the rule in docs/api.md ("Key format").
const SPEC_VALUE: Record<string, number> = Object.fromEntries([...ALPHABET].map((c, i) => [c, i]));
function specParse(input: string) {
  if (input.length > 64) return { ok: false, reason: 'format' };
  const chars = input
    .trim()
    .toUpperCase()
    .replace(/-/g, '')
    .replace(/[OIL]/g, (c) => ({ O: '0', I: '1', L: '1' })[c]!);
  if (chars.length !== 30 || [...chars].some((c) => SPEC_VALUE[c] === undefined))
    return { ok: false, reason: 'format' };
  let sum = 0;
  for (let i = 0; i < 28; i++) sum += (i + 1) * SPEC_VALUE[chars[i]];
  const check = ALPHABET[Math.floor((sum % 1021) / 32)] + ALPHABET[(sum % 1021) % 32];
  if (check !== chars.slice(28)) return { ok: false, reason: 'checksum' };
  return { ok: true, key: chars.match(/.{5}/g)!.join('-') };
}

/** The key issued for 28 random characters: the check characters added, grouped by five. */
function issuedKey(body: string): string {
  let sum = 0;
  for (let i = 0; i < 28; i++) sum += (i + 1) * SPEC_VALUE[body[i]];
  const chars = body + ALPHABET[Math.floor((sum % 1021) / 32)] + ALPHABET[(sum % 1021) % 32];
  return chars.match(/.{5}/g)!.join('-');
}

describe('licence key reading, fast and general alike', () => {
  it('reads back the keys issuedKey() makes (the generator below is right)', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateLicenseKey();
      expect(issuedKey(key.replace(/-/g, '').slice(0, 28))).toBe(key);
    }
  });

  const typed = fc.oneof(
    // Issued keys as people and apps send them: case, hyphens, aliases, spaces, typos, cut or doubled.
    fc
      .tuple(
        fc
          .array(fc.constantFrom(...ALPHABET), { minLength: 28, maxLength: 28 })
          .map((chars) => issuedKey(chars.join(''))),
        fc.array(fc.constantFrom('lower', 'nohyphens', 'alias', 'spaces', 'typo', 'cut', 'extra', 'hyphens'), {
          maxLength: 3,
        }),
        fc.nat(40),
        fc.constantFrom(...'0123456789ABCDEFGHJKMNPQRSTVWXYZoiluU-! ſıß'),
      )
      .map(([key, edits, at, c]) =>
        edits.reduce((k, edit) => {
          if (edit === 'lower') return k.toLowerCase();
          if (edit === 'nohyphens') return k.replace(/-/g, '');
          if (edit === 'alias') return k.replace(/0/g, 'O').replace(/1/g, 'l');
          if (edit === 'spaces') return ` ${k}\t`;
          if (edit === 'typo') return k.slice(0, at % k.length) + c + k.slice((at % k.length) + 1);
          if (edit === 'cut') return k.slice(0, at % k.length);
          if (edit === 'extra') return k + c;
          return k.replace(/-/g, '--');
        }, key),
      ),
    fc.string({ maxLength: 70 }),
    fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFGHJKMNPQRSTVWXYZabcxyzOIL-'), minLength: 28, maxLength: 40 }),
  );

  it('gives the same answer as the general reading for any input', () => {
    fc.assert(
      fc.property(typed, (input) => {
        expect(parseNativeKey(input)).toEqual(specParse(input));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads Unicode that upper-cases to a key character as the general reading does', () => {
    const key = generateLicenseKey();
    const withLongS = key.includes('S') ? key.replace('S', 'ſ') : null; // ſ upper-cases to S
    if (withLongS) expect(parseLicenseKey(withLongS)).toEqual({ ok: true, key });
    expect(parseLicenseKey(key.replace(/1/g, 'ı'))).toEqual({ ok: true, key }); // dotless i upper-cases to I, an alias of 1
  });
});

// Keys imported from another system: matched by their exact text, never by the check characters.
describe('foreign licence keys', () => {
  const keygenHex = 'C1B6DE-39A6E3-DE1529-8559A4-E4F6D9-V3';
  const keygenPlainHex = '4f5d8b2e9a1c4e7f8b3d2a6c9e0f1a2b';
  const lemonSqueezy = '38b1460a-5104-4067-a91d-77b872934d51';
  const gumroad = '85DB562A-C11D4B06-A2335A6B-8C079166';

  it.each([[keygenHex], [keygenPlainHex], [lemonSqueezy], [gumroad]])('reads %p as itself, case kept', (key) => {
    expect(parseLicenseKey(key)).toEqual({ ok: true, key, foreign: true });
    expect(parseLicenseKey(`  ${key}\t`)).toEqual({ ok: true, key, foreign: true });
  });

  it('matches case exactly: another case is another key', () => {
    expect(parseLicenseKey(lemonSqueezy.toUpperCase())).toEqual({
      ok: true,
      key: lemonSqueezy.toUpperCase(),
      foreign: true,
    });
  });

  it('the typo shortcut never refuses a foreign key (hex, UUID, Gumroad, any 8 to 64 characters that are not native-shaped)', () => {
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 8, maxLength: 64 });
    const uuid = fc.uuid();
    const gumroadKey = fc
      .array(fc.string({ unit: fc.constantFrom(...'0123456789ABCDEF'), minLength: 8, maxLength: 8 }), {
        minLength: 4,
        maxLength: 4,
      })
      .map((g) => g.join('-'));
    const any = fc.string({ unit: fc.constantFrom(...'ABCxyz0189._~+=:-'), minLength: 8, maxLength: 64 });
    fc.assert(
      fc.property(fc.oneof(hex, uuid, gumroadKey, any), (key) => {
        const native = parseNativeKey(key);
        // A native-shaped key keeps its native reading (an import refuses one whose check is wrong).
        if (native.ok || native.reason === 'checksum') return;
        const parsed = parseLicenseKey(key);
        expect(parsed).toEqual({ ok: true, key, foreign: true });
        // ...and judge(), the verdict both the gateway and the licence service give, never answers the typo message.
        const verdict = judge(
          parsed,
          null,
          { accountId: 'acct_x', productId: '', fingerprint: '' },
          { fingerprintActive: false, count: 0 },
          new Date(),
        );
        expect(verdict.detail).toBe('no licence with this key');
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps the check-character shortcut for native-shaped keys', () => {
    const key = generateLicenseKey();
    const typo = key.slice(0, 3) + (key[3] === '7' ? '8' : '7') + key.slice(4);
    expect(parseLicenseKey(typo)).toEqual({ ok: false, reason: 'checksum' });
  });
});

describe('foreign keys as License credentials', () => {
  it('estimates bits by the smallest usual alphabet, separators and repeats not counted', () => {
    // A UUID: 32 hexadecimal digits, one of them repeating the one before ("77").
    expect(foreignKeyEntropyBits('0f8fad5b-d9cb-469f-a165-70867728950e')).toBeCloseTo(31 * 4);
    expect(Math.round(foreignKeyEntropyBits('1234567890123456'))).toBe(53);
    // A run counts once: one character of upper-case hexadecimal.
    expect(foreignKeyEntropyBits('AAAAAAAAAAAAAAAAAAAAAAAA')).toBeCloseTo(Math.log2(6));
    expect(Math.round(foreignKeyEntropyBits('ABAB-ABAB'))).toBe(Math.round(8 * Math.log2(6)));
    expect(Math.round(foreignKeyEntropyBits('Zz9+'))).toBe(Math.round(4 * Math.log2(10 + 26 + 26 + 3)));
  });

  it('refuses keys under 16 characters or 80 estimated bits, saying which, and takes common imported shapes', () => {
    expect(weakForeignCredential('SHORT-KEY-42')).toMatch(/12 characters, fewer than the 16/);
    expect(weakForeignCredential('1234567890123456')).toMatch(/estimated 53 bits, fewer than the 80/);
    expect(weakForeignCredential('aaaaaaaaaaaaaaaaaaaaaaaa')).toMatch(/estimated 2 bits/);
    expect(weakForeignCredential('0f8fad5b-d9cb-469f-a165-70867728950e')).toBeUndefined(); // a UUID
    expect(weakForeignCredential('85DB562A-C11D4B06-A2335A6B-8C079166')).toBeUndefined(); // Gumroad
    expect(weakForeignCredential('C1B6DE-39A6E3-DE1529-8559A6-0EA8A8-V3')).toBeUndefined(); // Keygen
  });
});
