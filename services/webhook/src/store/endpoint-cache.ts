import type { EndpointDoc } from './models';
import type { EndpointStore } from './queries';

/** Accounts whose endpoints are kept at most; the oldest entry goes first. */
const MAX_ACCOUNTS = 10_000;

/**
 * An account's enabled endpoints, kept in memory for at most `maxAgeMs`: the
 * fan-out asks for them once per account per batch of events, and the
 * dispatcher for the endpoint of every delivery it sends, so without this each
 * event and each delivery cost a store read (most accounts have no endpoint at
 * all, and that answer is kept too).
 *
 * Staleness: every write this instance makes to an endpoint (EndpointStore's
 * onWrite) forgets that account at once, so one instance (npm start) never sees
 * an old answer. A change made through another replica reaches this one within
 * `maxAgeMs`: meanwhile an event may still be fanned out to an endpoint just
 * disabled there (the dispatcher drops it only once it sees the endpoint
 * disabled), a new endpoint there may miss the events of that moment, and a
 * delivery may still go to the URL or carry the signatures of just before.
 * 0 reads the store every time.
 */
export class EndpointCache {
  private readonly entries = new Map<string, { at: number; endpoints: EndpointDoc[] }>();
  /** Bumped by every invalidation: a read that began before one is not kept (it may predate the write). */
  private generation = 0;

  constructor(
    private readonly store: Pick<EndpointStore, 'enabledOf'>,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async enabledOf(accountId: string): Promise<EndpointDoc[]> {
    const hit = this.entries.get(accountId);
    if (hit && this.now() - hit.at < this.maxAgeMs) return hit.endpoints;
    const generation = this.generation;
    const at = this.now();
    const endpoints = await this.store.enabledOf(accountId);
    if (this.maxAgeMs > 0 && generation === this.generation) {
      this.entries.delete(accountId); // re-inserted last: the map's order is the age order
      this.entries.set(accountId, { at, endpoints });
      if (this.entries.size > MAX_ACCOUNTS) this.entries.delete(this.entries.keys().next().value!);
    }
    return endpoints;
  }

  /** The enabled endpoint of this account with this id, as far as the cache knows (undefined: not enabled, or unknown). */
  async enabled(accountId: string, endpointId: string): Promise<EndpointDoc | undefined> {
    return (await this.enabledOf(accountId)).find((e) => e._id === endpointId);
  }

  /** Forgets the account (this instance changed one of its endpoints). */
  invalidate(accountId: string): void {
    this.generation++;
    this.entries.delete(accountId);
  }
}
