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

/** How long the code form may be answered after the right password (then the password is asked again). */
export const CODE_STAGE_TTL_MS = 10 * 60 * 1000;
/** Wrong codes one right password allows: then the sign-in starts over, with the password's throttle. */
export const MAX_CODE_FAILURES = 5;

type SessionTimes = { ended_at: Date | null; expires_at: Date; stage?: 'code' };

/** A full session: not ended, not expired, and not one still waiting for its second factor. */
export function sessionIsLive(s: SessionTimes, now: Date): boolean {
  return !s.stage && !s.ended_at && s.expires_at.getTime() > now.getTime();
}

/** A sign-in whose password was right, waiting for its code, still in time. */
export function codeStageIsLive(s: SessionTimes, now: Date): boolean {
  return s.stage === 'code' && !s.ended_at && s.expires_at.getTime() > now.getTime();
}

/** A token has the shape we issue (the shared rule); anything else is refused without a look-up. */
export { isSessionToken } from '@licensing/runtime';
