import { createHash, randomBytes } from 'node:crypto';

// Ids are "<prefix>_" + 26 Crockford base32 characters: 48 bits of milliseconds
// then 80 random bits (ULID layout). They sort by creation time, which makes
// cursor pagination a simple range query on _id, and they are unguessable.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = 0;
let lastRandom: Buffer = Buffer.alloc(10);

function encode(bytes: Buffer, chars: number): string {
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return out;
}

function increment(buf: Buffer): Buffer {
  const next = Buffer.from(buf);
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 255) {
      next[i]++;
      return next;
    }
    next[i] = 0;
  }
  return randomBytes(10);
}

export function newId(prefix: string, now: number = Date.now()): string {
  // Monotonic within one process: ids made in the same millisecond still sort in order.
  if (now <= lastTime) lastRandom = increment(lastRandom);
  else {
    lastTime = now;
    lastRandom = randomBytes(10);
  }
  const time = Buffer.alloc(6);
  time.writeUIntBE(Math.max(now, lastTime), 0, 6);
  return `${prefix}_${encode(time, 10)}${encode(lastRandom, 16)}`;
}

export function isId(prefix: string, value: unknown): value is string {
  return typeof value === 'string' && new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`).test(value);
}

/**
 * An id of the usual shape that is a function of what it names: its time part `atMs`, its other 80
 * bits from `seed`'s SHA-256. Made again from the same fact it is the same id (a record written twice
 * is one), and it still sorts by time among ids made by newId().
 */
export function idFor(prefix: string, atMs: number, seed: string): string {
  const time = Buffer.alloc(6);
  time.writeUIntBE(Math.max(0, Math.min(atMs, 2 ** 48 - 1)), 0, 6);
  return `${prefix}_${encode(time, 10)}${encode(createHash('sha256').update(seed).digest().subarray(0, 10), 16)}`;
}

/** The smallest id of `prefix` made at or after `atMs`: `_id >= idFloor(p, t)` is "made at t or later". */
export function idFloor(prefix: string, atMs: number): string {
  const time = Buffer.alloc(6);
  time.writeUIntBE(Math.max(0, Math.min(atMs, 2 ** 48 - 1)), 0, 6);
  return `${prefix}_${encode(time, 10)}${'0'.repeat(16)}`;
}
