import { createHmac, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { KeyScope } from '@licensing/proto';

// API key format (like GitHub's tokens): a type prefix that names the scope,
// 43 base62 characters carrying 256 random bits, and a 6-character base62
// CRC32 checksum. A mangled key fails the checksum before any database look-up,
// and secret scanners can recognise a leaked key by its shape.

/**
 * Live (unrevoked) keys an account may have at once. Enough for every server,
 * app and environment, few enough that Settings shows them all and a key
 * nobody remembers creating cannot hide among hundreds.
 */
export const MAX_LIVE_KEYS = 50;

const PREFIX: Record<KeyScope, string> = { full: 'lk_full_', validate: 'lk_val_' };
/** The scope each prefix's middle word names ("full", "val"). */
const SCOPE_OF_TAG = new Map(Object.entries(PREFIX).map(([scope, prefix]) => [prefix.slice(3, -1), scope as KeyScope]));
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // 62^43 > 2^256
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
const SHAPE = new RegExp(`^lk_(${[...SCOPE_OF_TAG.keys()].join('|')})_([0-9A-Za-z]{43})([0-9A-Za-z]{6})$`);

function base62(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

function checksum(prefixAndBody: string): string {
  return base62(BigInt(crc32(prefixAndBody)), CHECKSUM_LENGTH);
}

export function generateApiKey(scope: KeyScope): { secret: string; visiblePrefix: string } {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
  const head = `${PREFIX[scope]}${body}`;
  return { secret: `${head}${checksum(head)}`, visiblePrefix: visiblePrefix(head) };
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function parseApiKey(secret: string): { scope: KeyScope } | null {
  if (secret.length > 64) return null;
  const m = SHAPE.exec(secret);
  if (!m) return null;
  const head = `lk_${m[1]}_${m[2]}`;
  if (checksum(head) !== m[3]) return null;
  return { scope: SCOPE_OF_TAG.get(m[1])! };
}

/** What is kept to recognise a key in lists: its type prefix and four characters. */
export function visiblePrefix(secret: string): string {
  const i = secret.indexOf('_', 3) + 1;
  return secret.slice(0, i + 4);
}

/** The only form of a key kept at rest; look-ups go by this digest. */
export function digestApiKey(secret: string, pepper: string): string {
  return createHmac('sha256', pepper).update(secret).digest('hex');
}

/** The pepper a key stored without `pepper_id` was digested with: the single-value API_KEY_PEPPER. */
export const LEGACY_PEPPER_ID = 'legacy';

/**
 * API_KEY_PEPPER as versions (docs/operations.md, "Rotating secrets"): one pepper (the version
 * "legacy"), or `id:pepper` entries separated by commas or newlines, the first digesting new keys and
 * every one verifying the keys stored with its id. So a new pepper is rolled out first as a second
 * entry, then moved first, and the old one is dropped once no live key uses it.
 */
export interface Peppers {
  current: { id: string; pepper: string };
  /** Current first. */
  all: { id: string; pepper: string }[];
}

const PEPPER_ENTRY = /^([a-z0-9][a-z0-9_-]{0,31}):(.+)$/s;
const MIN_PEPPER = 16;

export function parsePeppers(setting: string): Peppers {
  const entries = setting
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
  const versioned = entries.length > 1 || (entries.length === 1 && PEPPER_ENTRY.test(entries[0]));
  const all = versioned
    ? entries.map((e) => {
        const m = PEPPER_ENTRY.exec(e);
        if (!m)
          throw new Error('API_KEY_PEPPER: with several peppers each entry is <id>:<pepper> (id: a-z, 0-9, _ and -)');
        return { id: m[1], pepper: m[2] };
      })
    : entries.map((pepper) => ({ id: LEGACY_PEPPER_ID, pepper }));
  if (!all.length) throw new Error('API_KEY_PEPPER is empty');
  if (all.length > 4) throw new Error('API_KEY_PEPPER holds more than 4 peppers');
  const ids = new Set<string>();
  for (const p of all) {
    if (ids.has(p.id)) throw new Error(`API_KEY_PEPPER: the pepper id "${p.id}" appears twice`);
    ids.add(p.id);
    if (p.pepper.length < MIN_PEPPER)
      throw new Error(`API_KEY_PEPPER: the pepper "${p.id}" is shorter than ${MIN_PEPPER} characters`);
  }
  return { current: all[0], all };
}

/** A pepper version and the digest under it, the current one first: how a presented key is looked up. */
export const candidateDigests = (secret: string, peppers: Peppers) =>
  peppers.all.map((p) => ({ id: p.id, digest: digestApiKey(secret, p.pepper) }));
