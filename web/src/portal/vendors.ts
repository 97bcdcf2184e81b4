import type { Vendor } from './session';

/** How long a portal's vendor (or that there is none) is trusted: a renamed account shows within a minute. */
export const VENDOR_CACHE_MS = 60_000;
/** Portals remembered at most (the oldest entry goes first). */
const VENDOR_CACHE_MAX = 10_000;

/**
 * The vendors of the portals being visited, found and not found, for a minute: a portal page costs the
 * account service one look-up per account per minute per gateway, not one per request, and a made-up
 * account id asked again and again costs one. Look-ups of the same id at the same moment share one call.
 */
export class VendorCache {
  private readonly known = new Map<string, { vendor: Vendor | null; untilMs: number }>();
  private readonly asking = new Map<string, Promise<Vendor | null>>();

  constructor(
    private readonly lookUp: (accountId: string) => Promise<Vendor | null>,
    private readonly nowMs: () => number = Date.now,
    private readonly ttlMs = VENDOR_CACHE_MS,
  ) {}

  /** The remembered answer: a vendor, null (no such account), or undefined (not known: a look-up is needed). */
  cached(accountId: string): Vendor | null | undefined {
    const hit = this.known.get(accountId);
    if (!hit) return undefined;
    if (hit.untilMs > this.nowMs()) return hit.vendor;
    this.known.delete(accountId);
    return undefined;
  }

  /** Looks the account up (one call for concurrent askers) and remembers the answer, found or not. */
  lookUpAndRemember(accountId: string): Promise<Vendor | null> {
    const pending = this.asking.get(accountId);
    if (pending) return pending;
    const asked = this.lookUp(accountId)
      .then((vendor) => {
        if (this.known.size >= VENDOR_CACHE_MAX) this.known.delete(this.known.keys().next().value!);
        this.known.set(accountId, { vendor, untilMs: this.nowMs() + this.ttlMs });
        return vendor;
      })
      .finally(() => this.asking.delete(accountId));
    this.asking.set(accountId, asked);
    return asked;
  }
}
