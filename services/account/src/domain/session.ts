import { randomBytes } from 'node:crypto';
import { sha256 } from '@licensing/runtime';

// Dashboard sessions: the cookie holds a random token; only its SHA-256 is
// stored (as the session's _id), so a database leak yields no usable cookie.
export const SESSION_TTL_MS = 12 * 3600 * 1000;

export function newSessionSecrets(): { token: string; digest: string; csrfToken: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, digest: digestSessionToken(token), csrfToken: randomBytes(32).toString('base64url') };
}

export function digestSessionToken(token: string): string {
  return sha256(token, 'hex');
}

export function sessionIsLive(s: { ended_at: Date | null; expires_at: Date }, now: Date): boolean {
  return !s.ended_at && s.expires_at.getTime() > now.getTime();
}

/** A token has the shape we issue (the shared rule); anything else is refused without a look-up. */
export { isSessionToken } from '@licensing/runtime';
