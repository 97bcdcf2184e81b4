import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256 } from '@licensing/runtime';

// Two-factor sign-in with time-based one-time codes (RFC 6238: HMAC-SHA1, 30-second steps, 6 digits),
// which every authenticator app reads from an otpauth:// URI. A code is accepted one step either side
// of now (clocks drift), and only for a step later than the last one used: a code is never good twice.
// Recovery codes stand in for a lost phone: 10, single use, only their SHA-256 kept.

export const TOTP_STEP_S = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of the current one a code may come from. */
const DRIFT_STEPS = 1;
export const RECOVERY_CODE_COUNT = 10;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Spaces, dashes and case do not matter (people type what they read); null for anything else. */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s-]/g, '').replace(/=+$/, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const i = BASE32.indexOf(ch);
    if (i < 0) return null;
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 20 random bytes (SHA-1's size, as RFC 4226 recommends), in base32. */
export const newTotpSecret = (): string => base32Encode(randomBytes(20));

export const stepAt = (now: Date): number => Math.floor(now.getTime() / 1000 / TOTP_STEP_S);

/** The code of one step (RFC 4226's dynamic truncation), `digits` long with leading zeros. */
export function totpCode(secret: Buffer, step: number, digits = TOTP_DIGITS): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** A code as typed: six digits, spaces allowed ("123 456"); null for anything else. */
export function cleanCode(code: string): string | null {
  const digits = code.replace(/\s/g, '');
  return /^\d{6}$/.test(digits) ? digits : null;
}

/**
 * The step a code belongs to when it is right for now (the caller refuses a step already used), else
 * null. Every candidate is compared in constant time, so the answer's time says nothing of which matched.
 */
export function matchTotp(secretBase32: string, code: string, now: Date): number | null {
  const secret = base32Decode(secretBase32);
  const typed = cleanCode(code);
  if (!secret || !typed) return null;
  const current = stepAt(now);
  let matched: number | null = null;
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    const same = timingSafeEqual(Buffer.from(totpCode(secret, step)), Buffer.from(typed));
    if (same) matched = step;
  }
  return matched;
}

/** What an authenticator app scans: the account's name as issuer, the person's e-mail as label. */
export function otpauthUri(issuer: string, email: string, secretBase32: string): string {
  const label = encodeURIComponent(`${issuer}:${email}`);
  const params = new URLSearchParams({
    secret: secretBase32,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_S),
  });
  return `otpauth://totp/${label}?${params.toString()}`;
}

/** Ten codes like `k7dq2-x9mfa`: 50 random bits each, in letters and digits that cannot be misread. */
export function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(10);
    const chars = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** A recovery code as typed (case, spaces and the dash do not matter); null when it cannot be one. */
export function cleanRecoveryCode(code: string): string | null {
  const clean = code.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z0-9]{10}$/.test(clean) ? clean : null;
}

/** What is stored of a recovery code: its SHA-256 (the code has 50 random bits: no salt needed). */
export const digestRecoveryCode = (clean: string): string => sha256(`recovery:${clean}`, 'hex');
