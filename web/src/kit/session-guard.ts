import { isSessionToken, sha256 } from '@licensing/runtime';
import type { AttemptThrottle } from '@licensing/runtime';

/** How long a token the service called unknown is not asked about again. */
export const UNKNOWN_SESSION_MEMORY_MS = 60_000;
/** Tokens (and throttled addresses) remembered at most; the oldest is forgotten first. */
export const SESSION_GUARD_ENTRIES = 10_000;

/**
 * Keeps made-up session cookies (the dashboard's, asked of the account service; the customer portal's,
 * of the notification service: both 43-character base64url tokens) from costing a service call each:
 * - a value that is not shaped like a session token is no session, without a look-up;
 * - a token the service called unknown is remembered (by digest, bounded, for
 *   UNKNOWN_SESSION_MEMORY_MS) and not asked about again;
 * - every unknown token counts against its client address (SESSION_FAILURES_PER_MINUTE, in Redis,
 *   shared by every gateway; IPv6 by its /64). An address over the limit has its tokens taken as no
 *   session, without a look-up, until its window ends (a browser there with a real session sees the
 *   sign-in page for that long; its cookie is kept).
 */
export class SessionGuard {
  private readonly unknown = new Map<string, number>();
  private readonly blocked = new Map<string, number>();

  constructor(
    private readonly throttle: AttemptThrottle,
    private readonly nowMs: () => number = Date.now,
    private readonly maxEntries = SESSION_GUARD_ENTRIES,
  ) {}

  /**
   * Whether the service may be asked about this cookie value from this address. `scope`: where the
   * token was presented (a portal's account), when a token may be a session in one place and not another.
   */
  mayLookUp(token: string, address: string, scope = ''): boolean {
    if (!isSessionToken(token)) return false;
    const now = this.nowMs();
    return !live(this.blocked, address, now) && !live(this.unknown, sha256(`${scope}:${token}`, 'hex'), now);
  }

  /** The service said this token is no session: remember it, and count it against the address. */
  async unknownToken(token: string, address: string, scope = ''): Promise<void> {
    const now = this.nowMs();
    remember(this.unknown, sha256(`${scope}:${token}`, 'hex'), now + UNKNOWN_SESSION_MEMORY_MS, this.maxEntries);
    const waitS = await this.throttle.fail(address).catch(() => null); // Redis away: the memory above still holds
    if (waitS !== null) remember(this.blocked, address, now + waitS * 1000, this.maxEntries);
  }
}

/** Whether `key` is remembered until after `now` (an expired entry is dropped). */
function live(map: Map<string, number>, key: string, now: number): boolean {
  const until = map.get(key);
  if (until === undefined) return false;
  if (until > now) return true;
  map.delete(key);
  return false;
}

function remember(map: Map<string, number>, key: string, until: number, max: number): void {
  map.delete(key); // re-inserted last: the oldest entry is always first
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, until);
}
