import {
  isOneOf,
  subscriptionStatuses,
  type SubscriptionFacts,
  leasesOf,
  withPolicyDefaults,
  type Leases,
  type EventOf,
  type EventsMatching,
  type EventType,
  type License,
  type LicenseFacts,
  type StoredStatus,
  type ValidationFacts,
} from '@licensing/proto';
import { ExactCache, NOT_FOLLOWING, sha256 } from '@licensing/runtime';
import type { EventFeed } from '../backends/event-feed';
import type { SentAnswer } from './sent-answers';

// Part of a validation's flow through license-validation/, drawn in validator.ts's header.
//
// The gateway's memory of licences it has validated, so a validation is
// answered without a gRPC call or a store read. An entry holds the facts the
// answer depends on (proto/rules judges them exactly as the licence service
// does); time is applied when answering, so expiry never needs an eviction.
//
// Exact through events: every change that can alter an answer evicts the entry
// on every gateway (license.*, product.updated). They are followed from the
// stream, numbered (runtime/events/followed-events.ts): while this gateway may be
// missing one (NATS down or reconnecting, a gap in the numbers, no heartbeat)
// the cache is neither read nor filled, and it is emptied when that starts and
// when it ends. A lookup that was in flight while an eviction for its account
// arrived is not cached (it may have read the state before the change). A TTL
// bounds staleness should all of that fail. The bounds: docs/architecture.md, "A map of the caches".

export interface CachedLicense {
  found: true;
  /** The answer of the current second to the last request for it, as sent (sent-answers.ts). */
  sent?: SentAnswer;
  facts: LicenseFacts;
  /** As the service returned it, with the e-mail; status is derived again when answering. */
  license: License;
  /** Active machines' fingerprints (only when activations matter: required, or floating seats). */
  fingerprints: ReadonlySet<string>;
  /**
   * When each floating seat among them lapses (epoch ms). Judged at answer time; a copy that says the
   * asking machine's seat lapsed is not used (validator.ts local()): a heartbeat may have renewed it
   * without an event, for a lease only grows. A reclaim or a DELETE sends license.deactivated, which evicts.
   */
  leases: Leases;
  activationCount: number;
}

export type CachedAnswer = CachedLicense | { found: false; sent?: SentAnswer };

/** What evicts: every licence event (of any type, now or later) and a product change. */
const FOLLOWED: Array<'license.>' | 'product.updated'> = ['license.>', 'product.updated'];
/**
 * For this long after this gateway evicted a key, it asks the licence service to read the store for
 * it: the instance that answers may hear the change later than we did, and answer from its memory.
 */
export const RECENT_EVICTION_MS = 10_000;

/** The cache key of a canonical licence key in an account: the key itself is never held as a map key. */
export function cacheKey(accountId: string, canonicalKey: string): string {
  return cacheKeyOfDigest(accountId, sha256(canonicalKey, 'base64url'));
}

/** The same, from the canonical key's digest (sha256, base64url) when the caller has it already. */
export const cacheKeyOfDigest = (accountId: string, keyDigest: string): string => `${accountId}:${keyDigest}`;

/** What the service told us, as a cache entry; null when it must not be cached. */
export function toCachedAnswer(facts: ValidationFacts): CachedAnswer | null {
  if (!facts.found) return { found: false };
  const l = facts.license;
  if (!l || !facts.cacheable) return null;
  return {
    found: true,
    license: l,
    facts: {
      account_id: l.account_id,
      product_id: l.product_id,
      status: facts.stored_status as StoredStatus,
      expires_at: l.expires_at ? new Date(l.expires_at) : null,
      policy: withPolicyDefaults(l.policy),
      extra_entitlements: l.extra_entitlements,
      subscription: subscriptionFacts(l),
      // A key a reroll replaced: judged not found from then on, with no eviction (time is applied when answering).
      ...(facts.retired_until ? { retired_until: new Date(facts.retired_until) } : {}),
    },
    fingerprints: new Set(facts.active_fingerprints),
    leases: leasesOf(facts.active_fingerprints, facts.active_lease_expires_at),
    activationCount: facts.activation_count,
  };
}

const dateOrNull = (s: string | undefined) => (s ? new Date(s) : null);

/** A subscription licence's facts (proto/rules/status.ts) as the service sent them; null otherwise. */
export function subscriptionFacts(l: License): SubscriptionFacts | null {
  const s = l.subscription;
  if (!s?.id || !isOneOf(subscriptionStatuses, s.status)) return null;
  return {
    id: s.id,
    status: s.status,
    trial_end: dateOrNull(s.trial_end),
    paid_through: dateOrNull(s.paid_through),
    grace_until: dateOrNull(s.grace_until),
    ended_early: s.ended_early === true,
  };
}

/** The account a cache key belongs to (its evictions spoil that account's look-ups in flight). */
const accountOf = (key: string) => key.slice(0, key.indexOf(':'));
/** A found licence's family: its account's product, all of whose licences a product change evicts. */
const productFamily = (accountId: string, productId: string) => `${accountId}\n${productId}`;
/** A product's entry among the recent evictions (no licence cache key has a line break). */
const recentProductKey = (accountId: string, productId: string) => `product\n${productFamily(accountId, productId)}`;
const familyOf = (key: string, answer: CachedAnswer) =>
  answer.found ? productFamily(accountOf(key), answer.facts.product_id) : undefined;

export class ValidationCache {
  /** LRU, generations per account, TTL, and no trust while NATS is away: the runtime's ExactCache. */
  private readonly cache: ExactCache<CachedAnswer>;
  /** Keys evicted by this gateway lately, with when (oldest first). */
  private readonly recentEvictions = new Map<string, number>();

  constructor(
    maxEntries: number,
    ttlMs: number,
    feed: EventFeed,
    private readonly onEvict: (type: EventType) => void = () => undefined,
    private readonly nowMs: () => number = Date.now,
  ) {
    const events = maxEntries > 0 ? feed.follow(FOLLOWED, (event) => this.evictFor(event)) : NOT_FOLLOWING;
    this.cache = new ExactCache(events, maxEntries, ttlMs, nowMs, accountOf, familyOf);
  }

  private evictFor(event: EventOf<EventsMatching<(typeof FOLLOWED)[number]>>): void {
    if (event.type === 'product.updated') {
      const productId = event.data.product?.id;
      if (typeof productId !== 'string') return;
      this.forgetProduct(event.account_id, productId);
    } else if (event.type !== 'license.batch_completed') {
      // (a batch's summary changes nothing: each of its licences had its own license.created)
      const license = event.data.license;
      const key = license?.key;
      if (typeof key !== 'string') return;
      this.forget(event.account_id, key);
      // Keys a reroll replaced answer as their licence does (until their grace ends): they go with it.
      for (const previous of license.previous_keys ?? [])
        if (typeof previous?.key === 'string') this.forget(event.account_id, previous.key);
    }
    this.onEvict(event.type);
  }

  get size(): number {
    return this.cache.size;
  }

  /** Answers are trusted only while every eviction can reach us. */
  get usable(): boolean {
    return this.cache.usable;
  }

  get(key: string): CachedAnswer | undefined {
    return this.cache.get(key);
  }

  /** Call before asking the service; pass the result to set(). */
  begin(key: string): number {
    return this.cache.begin(key);
  }

  /**
   * Stores an answer unless an eviction for its account (or a reconnect) happened since begin().
   * `rememberedSince` (epoch ms): the licence service answered from its memory, having read the
   * store then; such an answer is kept no longer than the TTL counted from that read.
   */
  set(key: string, answer: CachedAnswer, since: number, rememberedSince?: number): boolean {
    return this.cache.set(key, answer, since, rememberedSince);
  }

  /** Whether this gateway evicted the key within RECENT_EVICTION_MS (its next look-up reads the store). */
  evictedLately(key: string): boolean {
    this.dropOldEvictions();
    return this.recentEvictions.has(key);
  }

  /**
   * Whether this gateway evicted a product's licences within RECENT_EVICTION_MS: a licence's
   * entitlements are its product's current ones, which the licence service instance that answers may
   * not have heard of yet (its next look-up reads the store, the product included).
   */
  productEvictedLately(accountId: string, productId: string): boolean {
    return !!productId && this.evictedLately(recentProductKey(accountId, productId));
  }

  /** The map is in time order: the old ones are at its front. */
  private dropOldEvictions(): void {
    const since = this.nowMs() - RECENT_EVICTION_MS;
    for (const [key, at] of this.recentEvictions) {
      if (at > since) break;
      this.recentEvictions.delete(key);
    }
  }

  /**
   * Drops what is known of a licence key in an account. Called for the events,
   * and by this gateway right after it changed the licence itself, so its own
   * next answer already sees the change (read your writes) without waiting for
   * the event.
   */
  forget(accountId: string, canonicalKey: string): void {
    const key = cacheKey(accountId, canonicalKey);
    this.cache.evict(key);
    this.remember(key);
    this.dropOldEvictions(); // so the map holds RECENT_EVICTION_MS of evictions, never more
  }

  /** Re-inserted last: the map stays in time order (trimmed by forget() and every evictedLately()). */
  private remember(key: string): void {
    this.recentEvictions.delete(key);
    this.recentEvictions.set(key, this.nowMs());
  }

  /**
   * Drops every licence of a product in O(1), however many entries the cache holds (a product save
   * reaches every gateway: a walk of the whole cache there slowed every tenant's validations).
   */
  forgetProduct(accountId: string, productId: string): void {
    this.cache.evictFamily(accountId, productFamily(accountId, productId));
    // One entry for the product, however many licences it has; nothing walked here.
    this.remember(recentProductKey(accountId, productId));
  }

  clear(): void {
    this.cache.clear();
  }
}
