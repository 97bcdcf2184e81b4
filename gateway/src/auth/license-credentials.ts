import { AppError, ExactCache, NOT_FOLLOWING, sha256, type Following } from '@licensing/runtime';
import { parseLicenseKey, type EventOf, type EventsMatching, type StoredStatus } from '@licensing/proto';
import type { Clients } from '../backends/clients';
import type { EventFeed } from '../backends/event-feed';
import type { Principal } from './principal';

// Who a "License <key>" credential is: the licence service resolves the key (one read on the unique
// key index) to its account, licence, product and stored status, and the account service gives the
// account's plan and limits, as for an API key. Remembered here so an app's validations do not call
// either service on every request, and exact through events:
// - licence events are followed from the stream (numbered, as the validation cache's:
//   followed-events.ts), so a lost one empties the cache instead of going unnoticed:
//   license.suspended, .revoked, .reinstated (any licence event but an activation's, which changes
//   none of this) evict the licence's entry on every gateway; license.created evicts a remembered
//   "unknown" for its key;
// - account.updated (core NATS, as the auth cache hears it) drops all of the account's licences (a
//   new plan or limits; a lost one is bounded by the TTL);
// - a look-up in flight when any of them arrived is not kept (one scope, as the auth cache);
// - a TTL bounds all of it should that ever fail. Bounds: docs/architecture.md, "A map of the caches".

const MAX_ENTRIES = 100_000;
const TTL_MS = 60_000;

const FOLLOWED: Array<'license.>'> = ['license.>'];
/** Events that never change a licence's account, product or status. */
const UNCHANGING = new Set(['license.activated', 'license.deactivated']);

const oneScope = () => '';
const accountOf = (_digest: string, p: Principal) => p.accountId || undefined;

/** The digest a licence key is remembered (and counted) under: never the key itself. */
export const licenseDigest = (canonicalKey: string): string => sha256(canonicalKey, 'base64url');

/**
 * The digest of the licence a request names (as sent), for its per-licence budget: its canonical
 * key's, so every spelling of one key spends one budget; a malformed one's own (it is refused later).
 */
export function namedLicenseDigest(sent: string): string {
  const parsed = parseLicenseKey(sent);
  return licenseDigest(parsed.ok ? parsed.key : sent.slice(0, 64));
}

/** The principal of an unknown licence key: no account; it may validate (and gets not_found), nothing else. */
export function unknownLicense(key: string, digest: string): Principal {
  return {
    accountId: '',
    plan: 'free',
    perMinuteOverride: 0,
    perHourOverride: 0,
    keyId: '',
    scope: 'validate',
    credential: 'license',
    license: { key, digest, id: '', productId: '', status: 'unknown' },
  };
}

/** Asks the licence service and the account service who a licence key is. */
export async function resolveLicense(
  clients: Pick<Clients, 'licenses' | 'accounts'>,
  key: string,
  digest: string,
): Promise<Principal> {
  const found = await clients.licenses.resolveLicenseKey({ key });
  if (!found.found) return unknownLicense(key, digest);
  let account: Awaited<ReturnType<Clients['accounts']['getAccount']>>;
  try {
    account = await clients.accounts.getAccount({ id: found.account_id });
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return unknownLicense(key, digest);
    throw err;
  }
  return {
    accountId: found.account_id,
    plan: account.plan,
    perMinuteOverride: account.per_minute_limit,
    perHourOverride: account.per_hour_limit,
    keyId: found.license_id,
    scope: 'validate',
    credential: 'license',
    license: {
      key,
      digest,
      id: found.license_id,
      productId: found.product_id,
      status: found.stored_status as StoredStatus,
    },
  };
}

/** The gateway's memory of licence credentials, by the digest of the canonical key. */
export class LicenseCredentials {
  private readonly cache: ExactCache<Principal>;

  constructor(
    private readonly clients: Pick<Clients, 'licenses' | 'accounts'>,
    feed: Pick<EventFeed, 'follow' | 'subscribe'>,
    maxEntries = MAX_ENTRIES,
    ttlMs = TTL_MS,
  ) {
    const events: Following = maxEntries > 0 ? feed.follow(FOLLOWED, (event) => this.evictFor(event)) : NOT_FOLLOWING;
    this.cache = new ExactCache<Principal>(events, maxEntries, ttlMs, Date.now, oneScope, accountOf);
    feed.subscribe('account.updated', (event) => this.cache.evictFamily(oneScope(), event.account_id));
  }

  private evictFor(event: EventOf<EventsMatching<(typeof FOLLOWED)[number]>>): void {
    if (UNCHANGING.has(event.type) || event.type === 'license.batch_completed') return;
    const license = event.data.license;
    if (typeof license?.key === 'string') this.cache.evict(licenseDigest(license.key));
    // A key a reroll replaced is its licence's credential during its grace: it goes with the licence.
    for (const previous of license?.previous_keys ?? [])
      if (typeof previous?.key === 'string') this.cache.evict(licenseDigest(previous.key));
  }

  /** The remembered principal of a licence key's digest, if any (the fast path reads only this). */
  get(digest: string): Principal | undefined {
    return this.cache.get(digest);
  }

  /** The principal of a canonical licence key: remembered, else resolved (and remembered). */
  async principalOf(key: string, digest = licenseDigest(key)): Promise<Principal> {
    const hit = this.cache.get(digest);
    if (hit) return hit;
    const since = this.cache.begin(digest);
    const principal = await resolveLicense(this.clients, key, digest);
    this.cache.set(digest, principal, since);
    return principal;
  }
}
