import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { AppError } from '@licensing/runtime';

// Cookies of the server-rendered surfaces: HttpOnly always, SameSite, Secure outside development and
// test, each scoped to its surface's path. Before a session exists, forms carry a double-submit CSRF
// token (a cookie and the same value in the form).

export interface CookieOptions {
  path: string;
  maxAgeS: number;
  secure: boolean;
  sameSite: 'Lax' | 'Strict';
}

/** One Set-Cookie value. */
export function cookieLine(name: string, value: string, opts: CookieOptions): string {
  return `${name}=${encodeURIComponent(value)}; Path=${opts.path}; Max-Age=${opts.maxAgeS}; HttpOnly; SameSite=${opts.sameSite}${opts.secure ? '; Secure' : ''}`;
}

/** Seconds from now until `expiresAt` (RFC 3339), at least 0: a session cookie's Max-Age. */
export const secondsUntil = (expiresAt: string, nowMs = Date.now()): number =>
  Math.max(0, Math.floor((Date.parse(expiresAt) - nowMs) / 1000) || 0);

/** A cookie's value; a value that is not percent-encoded UTF-8 is the client's mistake (400). */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join('='));
    } catch {
      throw new AppError('invalid_request', `the ${name} cookie is malformed`, [
        { field: 'cookie', message: `the ${name} cookie is malformed` },
      ]);
    }
  }
  return undefined;
}

/** A fresh double-submit token, set as the cookie `name` on `path` (an hour, SameSite=Strict). */
export function issueCsrfCookie(res: Response, name: string, path: string, secure: boolean): string {
  const token = randomBytes(32).toString('base64url');
  res.append('Set-Cookie', cookieLine(name, token, { path, maxAgeS: 3600, secure, sameSite: 'Strict' }));
  return token;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time comparison of a presented token with the expected one. */
export function tokensMatch(expected: string | undefined, presented: unknown): boolean {
  if (!expected || typeof presented !== 'string' || !presented) return false;
  return timingSafeEqual(digest(expected), digest(presented));
}

/** The form's _csrf field against the double-submit cookie `name`. */
export const csrfCookieMatches = (req: Request, name: string): boolean =>
  tokensMatch(readCookie(req, name), (req.body as Record<string, unknown> | undefined)?._csrf);
