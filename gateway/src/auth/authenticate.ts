import type { NextFunction, Request, Response } from 'express';
import { AppError, sha256, type Logger } from '@licensing/runtime';
import type { EventFeed } from '../backends/event-feed';
import type { KeyScope } from '@licensing/proto';
import type { Clients } from '../backends/clients';

export interface Principal {
  accountId: string;
  plan: string;
  /** Operator overrides of the rate limits; 0 = the plan's default. */
  perMinuteOverride: number;
  perHourOverride: number;
  keyId: string;
  scope: KeyScope;
}

// A `validate` key ships inside customers' apps: it may only validate and ask for status.
const VALIDATE_SCOPE_ROUTES = new Set([
  'GET /api/v1/licenses/validate',
  'POST /api/v1/keys/validate',
  'GET /api/v1/status',
]);

const MAX_TOKEN_LENGTH = 200;
const MAX_CACHE_ENTRIES = 10_000;

/**
 * While the account service cannot answer (503: its store, or the service itself, away), a key it
 * verified less than this long ago is still trusted, so validations the gateway can answer from
 * memory go on being answered. Revoking a key needs that same store, and api_key.revoked (which
 * evicts at once, NATS being up or the cache off) still reaches this gateway; what this allows is
 * a revocation made just before the outage whose event was lost to be noticed up to this late.
 */
export const AUTH_STALE_IF_UNAVAILABLE_MS = 30_000;

const unavailable = (err: unknown) => err instanceof AppError && err.code === 'service_unavailable';

/**
 * Remembers authenticated keys briefly so the validation hot path does not
 * call the account service on every request. A revocation reaches every
 * gateway over NATS and evicts the key at once; while this gateway's NATS
 * connection is down the cache is bypassed and emptied, so a revocation is
 * never missed.
 *
 * Refresh ahead: an entry is trusted for at most ttlMs (1 s), but once half of
 * that has passed, the request that reads it starts one check with the account
 * service in the background (with its own token: no token is kept here). A
 * key in use is therefore renewed before it expires and the hot path never
 * waits for the account service, while a revoked key still stops within ttlMs.
 * Only while the account service answers that it is unavailable does an entry
 * outlive ttlMs, up to AUTH_STALE_IF_UNAVAILABLE_MS after its last check.
 */
export class AuthCache {
  private readonly entries = new Map<
    string,
    { principal: Principal; expires: number; refreshAt: number; verifiedAt: number }
  >();
  private readonly refreshing = new Set<string>();
  /** Bumped by every eviction: a lookup that started before one is not cached (it may predate a revocation). */
  private generation = 0;
  /** The account service's last answer (a check or a look-up) was "unavailable". */
  private accountsAway = false;

  constructor(
    private readonly ttlMs: number,
    private readonly bus: EventFeed,
    /** Asks the account service again; resolves to the principal, or null when the key is no longer valid. */
    private readonly recheck?: (token: string) => Promise<Principal | null>,
  ) {
    bus.onStatus(() => {
      this.generation++;
      this.entries.clear();
    });
    bus.subscribe('api_key.revoked', (event) => {
      const keyId = event.data.api_key.id;
      this.evict((p) => p.keyId === keyId);
    });
    // A new plan or new limits apply on the account's next request.
    bus.subscribe('account.updated', (event) => this.evict((p) => p.accountId === event.account_id));
  }

  private evict(match: (p: Principal) => boolean): void {
    this.generation++;
    for (const [digest, entry] of this.entries) if (match(entry.principal)) this.entries.delete(digest);
  }

  /** The cached principal of a key; `token` (the key itself) lets a read start the background refresh. */
  get(digest: string, token?: string): Principal | undefined {
    if (!this.bus.connected) return undefined;
    const hit = this.entries.get(digest);
    if (!hit) return undefined;
    const now = Date.now();
    if (hit.expires < now) {
      // Kept (not trusted) for as long as it could serve while the account service is away.
      if (now >= hit.verifiedAt + AUTH_STALE_IF_UNAVAILABLE_MS) this.entries.delete(digest);
      if (!this.accountsAway || now >= hit.verifiedAt + AUTH_STALE_IF_UNAVAILABLE_MS) return undefined;
    }
    if (token && this.recheck && now >= hit.refreshAt && !this.refreshing.has(digest)) this.refresh(digest, token);
    return hit.principal;
  }

  /** What the account service's last answer said of its availability (every look-up reports here). */
  noteAnswer(err?: unknown): void {
    this.accountsAway = unavailable(err);
  }

  private refresh(digest: string, token: string): void {
    this.refreshing.add(digest);
    const since = this.begin();
    this.recheck!(token)
      .then((principal) => {
        this.noteAnswer();
        if (principal) this.set(digest, principal, since);
        else this.entries.delete(digest);
      })
      .catch((err) => this.noteAnswer(err)) // the account service is away: the entry expires (see get)
      .finally(() => this.refreshing.delete(digest));
  }

  /** Call before asking the account service; pass the result to set(). */
  begin(): number {
    return this.generation;
  }

  set(digest: string, principal: Principal, since: number): void {
    if (this.ttlMs === 0 || !this.bus.connected || since !== this.generation) return;
    if (this.entries.size >= MAX_CACHE_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const now = Date.now();
    this.entries.set(digest, {
      principal,
      expires: now + this.ttlMs,
      refreshAt: now + this.ttlMs / 2,
      verifiedAt: now,
    });
  }
}

/** Asks the account service who a key is (unauthorized AppError when it is no key). */
export async function lookUp(clients: Pick<Clients, 'accounts'>, token: string): Promise<Principal> {
  const auth = await clients.accounts.authenticate({ secret: token });
  const account = auth.account!;
  return {
    accountId: account.id,
    plan: account.plan,
    perMinuteOverride: account.per_minute_limit,
    perHourOverride: account.per_hour_limit,
    keyId: auth.key_id,
    scope: auth.scope === 'validate' ? 'validate' : 'full',
  };
}

/** The background re-check of a cached key: null when the account service says it is no longer valid. */
export function recheckWith(clients: Pick<Clients, 'accounts'>) {
  return (token: string): Promise<Principal | null> =>
    lookUp(clients, token).catch((err) => {
      if (err instanceof AppError && err.code === 'unauthorized') return null;
      throw err;
    });
}

function bearerToken(req: Request): string {
  const header = req.get('authorization');
  if (!header)
    throw new AppError('unauthorized', 'the Authorization header is missing; send "Authorization: Bearer <API key>"');
  const m = /^Bearer ([^\s]+)$/.exec(header);
  if (!m || m[1].length > MAX_TOKEN_LENGTH)
    throw new AppError('unauthorized', 'the Authorization header must be "Bearer <API key>"');
  return m[1];
}

/**
 * Bearer auth. `onRejected` runs, and is awaited, before a 401 goes out: the
 * per-address failure count is up to date when the client sends its next try,
 * and it may answer 429 instead.
 */
export function authenticate(
  clients: Clients,
  cache: AuthCache,
  onRejected: (req: Request, res: Response) => Promise<void> = async () => undefined,
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    let principal: Principal | undefined;
    try {
      const token = bearerToken(req);
      const digest = sha256(token, 'hex');
      principal = cache.get(digest, token);
      if (!principal) {
        const since = cache.begin();
        try {
          principal = await lookUp(clients, token);
          cache.noteAnswer();
          cache.set(digest, principal, since);
        } catch (err) {
          cache.noteAnswer(err);
          // The account service is away and this key was verified recently: served as get() now would.
          principal = unavailable(err) ? cache.get(digest, token) : undefined;
          if (!principal) throw err;
        }
      }
    } catch (err) {
      if (err instanceof AppError && err.code === 'unauthorized') await onRejected(req, res);
      throw err;
    }
    res.locals.principal = principal;
    next();
  };
}

/** A `validate` key may only call the validation endpoints and status (403 otherwise). */
export function enforceScope(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const principal = principalOf(res);
    if (principal.scope === 'validate' && !VALIDATE_SCOPE_ROUTES.has(`${req.method} ${req.baseUrl}${req.path}`)) {
      log.debug({ key_id: principal.keyId }, 'validate-scope key refused');
      throw new AppError(
        'forbidden',
        'this API key has the validate scope: it may only validate licences and read status',
      );
    }
    next();
  };
}

export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
