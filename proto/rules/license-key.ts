import { randomBytes } from 'node:crypto';

// Licence keys: six groups of five uppercase Crockford base32 characters, e.g.
// 7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG. The first 28 characters carry 140 random
// bits; the last two are a check value: sum(position_weight * value) mod 1021.
// 1021 is prime and larger than any weight (1..28) or value difference (±31),
// so every single mistyped character and every swap of two characters changes
// the check value: a typo is refused without a database look-up.
export const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RANDOM_CHARS = 28;
const CHECK_CHARS = 2;
const KEY_CHARS = RANDOM_CHARS + CHECK_CHARS;
const MODULUS = 1021;
const GROUP = 5;

const VALUE: Record<string, number> = Object.fromEntries([...ALPHABET].map((c, i) => [c, i]));
// Crockford's aliases: letters people confuse with digits.
const ALIASES: Record<string, string> = { O: '0', I: '1', L: '1' };

function checkValue(chars: string): string {
  let sum = 0;
  for (let i = 0; i < chars.length; i++) sum += (i + 1) * VALUE[chars[i]];
  const c = sum % MODULUS;
  return ALPHABET[Math.floor(c / 32)] + ALPHABET[c % 32];
}

function group(chars: string): string {
  let out = chars.slice(0, GROUP);
  for (let i = GROUP; i < chars.length; i += GROUP) out += `-${chars.slice(i, i + GROUP)}`;
  return out;
}

/** The form keys are issued and stored in, as a regular expression (the OpenAPI document's pattern). */
export const LICENSE_KEY_PATTERN = `^[${ALPHABET}]{${GROUP}}(-[${ALPHABET}]{${GROUP}}){${KEY_CHARS / GROUP - 1}}$`;
/** A well-formed key with its right check characters, for documents and examples. */
export const EXAMPLE_LICENSE_KEY = ((body: string) => group(body + checkValue(body)))('7K3QF9XW2MT0RBHPZ4DNC8E1VQ3A');

export function generateLicenseKey(): string {
  const bytes = randomBytes(Math.ceil((RANDOM_CHARS * 5) / 8));
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let body = '';
  for (let i = 0; i < RANDOM_CHARS; i++) {
    body += ALPHABET[Number(bits & 31n)];
    bits >>= 5n;
  }
  return group(body + checkValue(body));
}

/** `foreign`: a key imported from another system (below), matched by its exact text. */
export type ParsedKey = { ok: true; key: string; foreign?: true } | { ok: false; reason: 'format' | 'checksum' };

/** The longest key anything reads (a native key is 35 characters; a foreign one at most this). */
export const MAX_LICENSE_KEY_LENGTH = 64;
/** The shortest foreign key an import takes. */
export const MIN_FOREIGN_KEY_LENGTH = 8;
/**
 * Keys imported from another system (Keygen, Lemon Squeezy, Gumroad, a spreadsheet): 8 to 64 of these
 * characters, kept exactly as they were (case included). A Keygen hex key, a Lemon Squeezy UUID and a
 * Gumroad `XXXXXXXX-XXXXXXXX-XXXXXXXX-XXXXXXXX` key are all of this form.
 */
export const FOREIGN_KEY_PATTERN = '^[A-Za-z0-9._~+=:-]{8,64}$';
const FOREIGN_KEY = new RegExp(FOREIGN_KEY_PATTERN);

/**
 * Canonical form of what a person or app typed. A native-shaped key (30 Crockford characters once
 * case, surrounding spaces, hyphens and the aliases O→0, I/L→1 are set aside) is read as a native key,
 * and its check characters refuse a typo without a look-up. Anything else that has the form of a
 * foreign key is that key, with surrounding spaces trimmed and nothing else changed: it is matched by
 * exact value, and no check-character shortcut ever refuses it. Imports refuse a native-shaped key
 * whose check characters are wrong (transfer/domain/import-rows.ts in the licence service), so every stored
 * key is either a native key that passes its check or one that is not native-shaped.
 */
export function parseLicenseKey(input: string): ParsedKey {
  const native = parseNativeKey(input);
  if (native.ok || native.reason === 'checksum' || input.length > MAX_LICENSE_KEY_LENGTH) return native;
  const trimmed = input.trim();
  return FOREIGN_KEY.test(trimmed) ? { ok: true, key: trimmed, foreign: true } : native;
}

/** The native reading alone: six groups of five Crockford characters with their check characters. */
export function parseNativeKey(input: string): ParsedKey {
  if (input.length > MAX_LICENSE_KEY_LENGTH) return { ok: false, reason: 'format' };
  return parsePlain(input) ?? parseAnyText(input);
}

/** Character code → value for plain ASCII: digits, both cases, aliases; HYPHEN for '-'; -1 for anything else. */
const HYPHEN = -2;
const PLAIN_VALUE = new Int8Array(128).fill(-1);
for (const [c, v] of Object.entries(VALUE)) {
  PLAIN_VALUE[c.charCodeAt(0)] = v;
  PLAIN_VALUE[c.toLowerCase().charCodeAt(0)] = v;
}
for (const [alias, c] of Object.entries(ALIASES)) {
  PLAIN_VALUE[alias.charCodeAt(0)] = VALUE[c];
  PLAIN_VALUE[alias.toLowerCase().charCodeAt(0)] = VALUE[c];
}
PLAIN_VALUE['-'.charCodeAt(0)] = HYPHEN;
const CANONICAL_LENGTH = KEY_CHARS + KEY_CHARS / GROUP - 1;

/**
 * The common case, in one pass without building strings (every validation parses a key): a key of
 * letters, digits and hyphens only. Anything else (spaces, other characters) returns undefined and
 * is read by parseAnyText, whose answer it always equals (the unit tests compare the two).
 */
function parsePlain(input: string): ParsedKey | undefined {
  let n = 0;
  let sum = 0;
  let check = 0;
  // Already in the form we issue (uppercase, canonical characters, hyphens every five): returned as it is.
  let canonical = input.length === CANONICAL_LENGTH;
  for (let i = 0; i < input.length; i++) {
    const code = input.charCodeAt(i);
    const value = code < 128 ? PLAIN_VALUE[code] : -1;
    if (value === -1) return undefined;
    if (value === HYPHEN) {
      if (i % (GROUP + 1) !== GROUP) canonical = false;
      continue;
    }
    if (i % (GROUP + 1) === GROUP || ALPHABET.charCodeAt(value) !== code) canonical = false;
    if (n < RANDOM_CHARS) sum += (n + 1) * value;
    else check = check * 32 + value;
    if (++n > KEY_CHARS) return { ok: false, reason: 'format' };
  }
  if (n !== KEY_CHARS) return { ok: false, reason: 'format' };
  if (sum % MODULUS !== check) return { ok: false, reason: 'checksum' };
  if (canonical) return { ok: true, key: input };
  let chars = '';
  for (let i = 0; i < input.length; i++) {
    const value = PLAIN_VALUE[input.charCodeAt(i)];
    if (value !== HYPHEN) chars += ALPHABET[value];
  }
  return { ok: true, key: group(chars) };
}

/** Any text: trimmed and upper-cased as Unicode does it (what parsePlain leaves to this). */
function parseAnyText(input: string): ParsedKey {
  const chars = input
    .trim()
    .toUpperCase()
    .replace(/-/g, '')
    .replace(/[OIL]/g, (c) => ALIASES[c]);
  if (chars.length !== KEY_CHARS) return { ok: false, reason: 'format' };
  for (let i = 0; i < KEY_CHARS; i++) if (VALUE[chars[i]] === undefined) return { ok: false, reason: 'format' };
  if (checkValue(chars.slice(0, RANDOM_CHARS)) !== chars.slice(RANDOM_CHARS)) return { ok: false, reason: 'checksum' };
  return { ok: true, key: group(chars) };
}

/** A foreign key shorter than this is no credential (`License`): it validates with an API key only. */
export const MIN_FOREIGN_CREDENTIAL_LENGTH = 16;
/** Nor is one of fewer than this many bits by foreignKeyEntropyBits(). */
export const MIN_FOREIGN_CREDENTIAL_BITS = 80;
/** Separators of the foreign form: they carry nothing and are not counted. */
const SEPARATORS = new Set(['-', '.', ':', '_']);

/**
 * A conservative estimate of the bits of a foreign key, as if each character were drawn at random from
 * the smallest usual alphabet covering the key: digits (10), plus lower-case letters (26, or 6 when they
 * are all a–f: hexadecimal) and upper-case letters (26, or 6 when all A–F), plus `+ = ~` (3). Each
 * counted character (separators `- . : _` are not) adds log2 of that alphabet's size, except one equal to
 * the character before it (a run such as `AAAA` counts once). A Lemon Squeezy UUID or a Gumroad key (32
 * hexadecimal digits) is 128 bits; 16 decimal digits are 53; `ABCD-1234` is 41.
 */
export function foreignKeyEntropyBits(key: string): number {
  let digits = false;
  let lower = false;
  let upper = false;
  let lowerBeyondHex = false;
  let upperBeyondHex = false;
  let symbols = false;
  let counted = 0;
  let previous = '';
  for (const c of key) {
    if (SEPARATORS.has(c)) continue;
    if (c >= '0' && c <= '9') digits = true;
    else if (c >= 'a' && c <= 'z') {
      lower = true;
      if (c > 'f') lowerBeyondHex = true;
    } else if (c >= 'A' && c <= 'Z') {
      upper = true;
      if (c > 'F') upperBeyondHex = true;
    } else symbols = true;
    if (c !== previous) counted++;
    previous = c;
  }
  const alphabet =
    (digits ? 10 : 0) +
    (lower ? (lowerBeyondHex ? 26 : 6) : 0) +
    (upper ? (upperBeyondHex ? 26 : 6) : 0) +
    (symbols ? 3 : 0);
  return alphabet > 1 ? counted * Math.log2(alphabet) : 0;
}

/**
 * Why a foreign key (parseLicenseKey's `foreign`) may not be a `License` credential, or undefined when
 * it may: anyone may send a credential, so a short or guessable one would let them act as the licence.
 */
export function weakForeignCredential(key: string): string | undefined {
  if (key.length < MIN_FOREIGN_CREDENTIAL_LENGTH)
    return `it has ${key.length} characters, fewer than the ${MIN_FOREIGN_CREDENTIAL_LENGTH} a License credential needs`;
  const bits = Math.floor(foreignKeyEntropyBits(key));
  if (bits < MIN_FOREIGN_CREDENTIAL_BITS)
    return `it carries an estimated ${bits} bits, fewer than the ${MIN_FOREIGN_CREDENTIAL_BITS} a License credential needs`;
  return undefined;
}
