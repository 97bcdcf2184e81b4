import { randomBytes } from 'node:crypto';

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
