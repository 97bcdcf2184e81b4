import { ExactCache, NOT_FOLLOWING, sha256, type EventBus, type Outbox } from '@licensing/runtime';
import { activationsMatter, isActionType, isFloating, type DomainEvent } from '@licensing/proto';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import { rerolledFrom } from '../store/retired-keys';

/** A licence with more active machines than this is read from the store on every validation (and never cached, here or in a gateway). */
export const MAX_CACHED_FINGERPRINTS = 100;

/** What validating a key needs from the store. */
export interface ValidationRecord {
  doc: LicenseDoc | null;
  /** Active machines' fingerprints when activations matter (activationsMatter), at most one past MAX_CACHED_FINGERPRINTS; else empty. */
  fingerprints: string[];
  /** When each floating seat among them lapses (epoch ms); node-locked ones are absent (proto/rules/lease.ts). */
  leases: Map<string, number>;
  /** Epoch ms when it was read from the store, when it comes from this cache (absent: read for this call). */
  rememberedSince?: number;
  /**
   * Set when the key is one a reroll replaced: `doc` is its licence (with the key asked in place of its
   * new one, which the holder of the old key is never shown), and the key validates until then.
   */
  retiredUntil?: Date;
}

/** Where a key a reroll replaced is found (store/retired-keys.ts), and its licence. */
export interface RetiredKeyLookup {
  find(key: string): Promise<{ account_id: string; license_id: string; until: Date } | null>;
}

/** Entries are found by a digest of the canonical key, as in the gateways: a licence key is never a map key. */
const digestOf = (key: string) => sha256(key, 'base64url');

/**
 * The licences this instance has validated, so a validation that reaches the
 * licence service (a gateway that does not know the key yet, or runs with its
 * cache off) costs no store read. The gateways' caches answer most validations
 * before they get here; this one serves their misses, and every gateway replica
 * after the first to ask.
 *
 * Exact as the gateways' are: every license.* event (from any instance) evicts
 * its key (followed from the stream, so a lost one empties the cache instead of
 * going unnoticed: followed-events.ts), and a change made by this instance evicts before it answers (the
 * use cases write through outbox() below), so a validation right after a
 * suspend never sees the licence active. A heartbeat sends no event: a lease only grows, and a copy
 * whose lease for the fingerprint asked about has lapsed is read again (validate-license.ts). Keys that were not found are not
 * kept: a gateway keeps those. Its bounds: docs/architecture.md, "A map of the caches".
 */
export class LicenseCache {
  private readonly cache: ExactCache<ValidationRecord>;

  constructor(
    private readonly store: Pick<LicenseStore, 'findByKey' | 'activeSeats'> &
      Partial<Pick<LicenseStore, 'findIdInAccount'>>,
    bus: Pick<EventBus, 'follow'>,
    maxEntries: number,
    ttlMs: number,
    private readonly counted: (result: 'hit' | 'miss' | 'bypass') => void = () => undefined,
    private readonly now: () => number = Date.now,
    /** Keys replaced by rerolls (absent: none are looked for). */
    private readonly retired?: RetiredKeyLookup,
  ) {
    const events = maxEntries > 0 ? bus.follow(['license.>'], (event) => this.forget([event])) : NOT_FOLLOWING;
    this.cache = new ExactCache(events, maxEntries, ttlMs, now);
  }

  /** The licence with this canonical key and, when they matter, its active machines (`fromStore`: not from memory). */
  async read(key: string, fromStore = false): Promise<ValidationRecord> {
    const slot = digestOf(key);
    const hit = fromStore ? undefined : this.cache.get(slot);
    this.counted(hit ? 'hit' : this.cache.usable ? 'miss' : 'bypass');
    if (hit) return hit;
    const token = this.cache.begin(slot);
    let doc = await this.store.findByKey(key);
    let retiredUntil: Date | undefined;
    if (!doc) {
      // A key a reroll replaced: its licence, judged with the end of the key's grace (not found after it).
      const replaced = await this.replaced(key);
      if (replaced) [doc, retiredUntil] = replaced;
    }
    const seats =
      doc && activationsMatter(doc.policy) ? await this.store.activeSeats(doc._id, MAX_CACHED_FINGERPRINTS + 1) : [];
    const fingerprints = seats.map((s) => s.fingerprint);
    // A seat's lease counts only while the licence's policy floats (a renewal may have made it node-locked).
    const leases = new Map<string, number>();
    if (doc && isFloating(doc.policy))
      for (const s of seats) if (s.leaseEndsAt !== null) leases.set(s.fingerprint, s.leaseEndsAt);
    if (doc && fingerprints.length <= MAX_CACHED_FINGERPRINTS)
      this.cache.set(slot, { doc, fingerprints, leases, rememberedSince: this.now(), retiredUntil }, token);
    return { doc, fingerprints, leases, retiredUntil };
  }

  /** The licence a reroll took this key from (shown with this key) and when the key stops validating. */
  private async replaced(key: string): Promise<[LicenseDoc, Date] | undefined> {
    const from = await rerolledFrom({ retired: this.retired, store: this.store }, key);
    return from && [{ ...from.doc, key }, from.until];
  }

  /** Evicts the licences these events are about (all of them when the events are not known). */
  forget(events: DomainEvent[] | undefined): void {
    if (!events) {
      this.cache.clear();
      return;
    }
    for (const event of events) {
      if (event.type === 'license.batch_completed') continue; // a summary: each licence had its own event
      if (isActionType(event.type)) continue; // the audit log's only (an import started): no licence changed
      const license = 'license' in event.data ? event.data.license : undefined;
      const key = license?.key;
      if (typeof key !== 'string') {
        this.cache.clear();
        continue;
      }
      this.cache.evict(digestOf(key));
      // The keys a reroll replaced answer as their licence does: they go with it.
      for (const previous of license?.previous_keys ?? [])
        if (typeof previous?.key === 'string') this.cache.evict(digestOf(previous.key));
    }
  }

  /** The outbox the use cases write through: what a write changes is forgotten here before its call answers. */
  outbox(inner: Pick<Outbox, 'flush'>): Pick<Outbox, 'flush'> {
    return {
      flush: (model, id, events) => {
        this.forget(events);
        return inner.flush(model, id, events);
      },
    };
  }

  get size(): number {
    return this.cache.size;
  }
}
