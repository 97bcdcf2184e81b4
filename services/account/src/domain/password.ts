import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AppError } from '@licensing/runtime';

// Passwords are hashed with scrypt (memory-hard) from node:crypto. The stored
// form names its parameters so they can be raised later without breaking old
// hashes: scrypt$N$r$p$salt$hash (base64url).
const N = 1 << 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

const params = (n: number, r: number, p: number): ScryptOptions => ({ N: n, r, p, maxmem: 256 * n * r });

// Common choices that pass a length rule; a real deployment may add a breached-password check.
const TOO_COMMON = new Set([
  'password123',
  'password1234',
  '1234567890',
  '0123456789',
  'qwertyuiop',
  'iloveyou123',
  'letmein1234',
  'administrator',
  'welcome12345',
  'passw0rd123',
]);

/** Refuses empty, short, overlong and obviously weak passwords with a message a person can act on. */
export function checkPassword(password: string): void {
  if (!password) throw AppError.invalid('password', 'password is required');
  if (password.length < PASSWORD_MIN)
    throw AppError.invalid('password', `password must be at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX)
    throw AppError.invalid('password', `password must be at most ${PASSWORD_MAX} characters`);
  if (new Set(password).size < 4 || TOO_COMMON.has(password.toLowerCase()))
    throw AppError.invalid('password', 'password is too easy to guess: use a longer phrase');
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, params(N, R, P));
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt') return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(
    password,
    Buffer.from(salt, 'base64url'),
    expected.length,
    params(Number(n), Number(r), Number(p)),
  );
  return timingSafeEqual(actual, expected);
}

/** Verified against when the e-mail is unknown, so both failures take the same time. */
export const UNKNOWN_USER_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_LENGTH).toString('base64url')}`;
