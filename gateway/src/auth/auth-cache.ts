import { ExactCache } from '@licensing/runtime';
import type { EventFeed } from '../backends/event-feed';
import { accountsUnavailable } from './account-lookup';
import type { Principal } from './principal';

// The gateway's memory of authenticated API keys, so the validation hot path does not call the
// account service on every request. Its bound, evictions and staleness bound are in
// docs/architecture.md, "A map of the caches" (and gateway/test/unit/auth-cache.test.ts proves them).

const MAX_CACHE_ENTRIES = 10_000;

/**
 * While the account service cannot answer (503: its store, or the service itself, away), a key it
 * verified less than this long ago is still trusted, so validations the gateway can answer from
 * memory go on being answered. Revoking a key needs that same store, and api_key.revoked (which
 * evicts at once, NATS being up or the cache off) still reaches this gateway; what this allows is
 * a revocation made just before the outage whose event was lost to be noticed up to this late.
 */
export const AUTH_STALE_IF_UNAVAILABLE_MS = 30_000;

/** A key the account service vouched for, and when. */
interface Verified {
  principal: Principal;
  verifiedAt: number;
}

/**
 * Every key is in one scope: an eviction spoils every look-up in flight, whatever its key (one that
 * began before a revocation or a plan change may have read the state before it).
 */
const oneScope = () => '';
/** A key's family is its account: api_key.revoked and account.updated drop all of an account's keys in O(1). */
const accountOf = (_digest: string, v: Verified) => v.principal.accountId;

/**
 * The runtime's ExactCache keyed by the key's digest (never the key), with what API keys need on top:
 * - trusted for at most `ttlMs` (1 s) after the account service last vouched for the key, so a
 *   revoked key stops within a second even when its event is lost; kept (not trusted) up to
 *   AUTH_STALE_IF_UNAVAILABLE_MS for while the account service answers "unavailable";
 * - refresh ahead: once half of ttlMs has passed, the request that reads an entry starts one check
 *   with the account service in the background (with its own key: no key is kept here), so a key
 *   in use is renewed before it expires and the hot path never waits for the account service;
 * - evicted by api_key.revoked and account.updated (over core NATS: a lost one costs at most ttlMs),
 *   and, as every ExactCache, neither read nor filled while this gateway's NATS link is down, and
 *   emptied when it drops or returns.
 */
export class AuthCache {
  private readonly cache: ExactCache<Verified>;
  private readonly refreshing = new Set<string>();
  /** The account service's last answer (a check or a look-up) was "unavailable". */
  private accountsAway = false;

  constructor(
    private readonly ttlMs: number,
    bus: EventFeed,
    /** Asks the account service again; resolves to the principal, or null when the key is no longer valid. */
    private readonly recheck?: (token: string) => Promise<Principal | null>,
  ) {
    this.cache = new ExactCache<Verified>(
      bus,
      ttlMs > 0 ? MAX_CACHE_ENTRIES : 0,
      // The cache's own TTL is the longest an entry may serve (the account service away); get() trusts it ttlMs.
      AUTH_STALE_IF_UNAVAILABLE_MS,
      () => Date.now(),
      oneScope,
      accountOf,
    );
    // A revocation drops all of the account's keys (the others are asked for again: one look-up each).
    bus.subscribe('api_key.revoked', (event) => this.cache.evictFamily(oneScope(), event.account_id));
    // A new plan or new limits apply on the account's next request.
    bus.subscribe('account.updated', (event) => this.cache.evictFamily(oneScope(), event.account_id));
  }

  /** The cached principal of a key; `token` (the key itself) lets a read start the background refresh. */
  get(digest: string, token?: string): Principal | undefined {
    const hit = this.cache.get(digest);
    if (!hit) return undefined;
    const now = Date.now();
    // Past its trust, it serves only while the account service is away (the cache drops it at the stale bound).
    if (now > hit.verifiedAt + this.ttlMs && !this.accountsAway) return undefined;
    if (token && this.recheck && now >= hit.verifiedAt + this.ttlMs / 2 && !this.refreshing.has(digest))
      this.refresh(digest, token);
    return hit.principal;
  }

  /** What the account service's last answer said of its availability (every look-up reports here). */
  noteAnswer(err?: unknown): void {
    this.accountsAway = accountsUnavailable(err);
  }

  private refresh(digest: string, token: string): void {
    this.refreshing.add(digest);
    const since = this.begin();
    this.recheck!(token)
      .then((principal) => {
        this.noteAnswer();
        if (principal) this.set(digest, principal, since);
        else this.cache.evict(digest);
      })
      .catch((err) => this.noteAnswer(err)) // the account service is away: the entry expires (see get)
      .finally(() => this.refreshing.delete(digest));
  }

  /** Call before asking the account service; pass the result to set(). */
  begin(): number {
    return this.cache.begin(oneScope());
  }

  /** Remembers what the account service said of a key, unless an eviction (or a NATS reconnect) came since begin(). */
  set(digest: string, principal: Principal, since: number): void {
    this.cache.set(digest, { principal, verifiedAt: Date.now() }, since);
  }
}
