import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AppError, type Logger } from '@licensing/runtime';
import type { EventFeed } from './event-feed';
import type { DomainEvent } from '@licensing/proto';
import type { Clients } from './clients';

export interface Principal {
  accountId: string;
  plan: string;
  /** Operator overrides of the rate limits; 0 = the plan's default. */
  perMinuteOverride: number;
  perHourOverride: number;
  keyId: string;
  scope: 'full' | 'validate';
}

// A `validate` key ships inside customers' apps: it may only validate and ask for status.
const VALIDATE_SCOPE_ROUTES = new Set(['GET /api/v1/licenses/validate', 'POST /api/v1/keys/validate', 'GET /api/v1/status']);

const MAX_TOKEN_LENGTH = 200;
const MAX_CACHE_ENTRIES = 10_000;

/**
 * Remembers authenticated keys briefly so the validation hot path does not
 * call the account service on every request. A revocation reaches every
 * gateway over NATS and evicts the key at once; while this gateway's NATS
 * connection is down the cache is bypassed and emptied, so a revocation is
 * never missed.
 */
export class AuthCache {
  private readonly entries = new Map<string, { principal: Principal; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly bus: EventFeed,
  ) {
    bus.onStatus(() => this.entries.clear());
    bus.subscribe('api_key.revoked', (event: DomainEvent) => {
      const keyId = (event as DomainEvent<'api_key.revoked'>).data.api_key.id;
      this.evict((p) => p.keyId === keyId);
    });
    // A new plan or new limits apply on the account's next request.
    bus.subscribe('account.updated', (event: DomainEvent) => this.evict((p) => p.accountId === event.account_id));
  }

  private evict(match: (p: Principal) => boolean): void {
    for (const [digest, entry] of this.entries) if (match(entry.principal)) this.entries.delete(digest);
  }

  get(digest: string): Principal | undefined {
    if (!this.bus.connected) return undefined;
    const hit = this.entries.get(digest);
    if (!hit) return undefined;
    if (hit.expires < Date.now()) {
      this.entries.delete(digest);
      return undefined;
    }
    return hit.principal;
  }

  set(digest: string, principal: Principal): void {
    if (this.ttlMs === 0 || !this.bus.connected) return;
    if (this.entries.size >= MAX_CACHE_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(digest, { principal, expires: Date.now() + this.ttlMs });
  }
}

function bearerToken(req: Request): string {
  const header = req.get('authorization');
  if (!header) throw new AppError('unauthorized', 'the Authorization header is missing; send "Authorization: Bearer <API key>"');
  const m = /^Bearer ([^\s]+)$/.exec(header);
  if (!m || m[1].length > MAX_TOKEN_LENGTH) throw new AppError('unauthorized', 'the Authorization header must be "Bearer <API key>"');
  return m[1];
}

/**
 * Bearer auth. `onRejected` runs, and is awaited, before a 401 goes out: the
 * per-address failure count is up to date when the client sends its next try.
 */
export function authenticate(clients: Clients, cache: AuthCache, onRejected: (req: Request) => Promise<void> = async () => undefined) {
  return async (req: Request, res: Response, next: NextFunction) => {
    let principal: Principal | undefined;
    try {
      const token = bearerToken(req);
      const digest = createHash('sha256').update(token).digest('hex');
      principal = cache.get(digest);
      if (!principal) {
        const auth = await clients.accounts.authenticate({ secret: token }, { requestId: res.locals.requestId });
        const account = auth.account!;
        principal = {
          accountId: account.id,
          plan: account.plan,
          perMinuteOverride: account.perMinuteLimit,
          perHourOverride: account.perHourLimit,
          keyId: auth.keyId,
          scope: auth.scope === 'validate' ? 'validate' : 'full',
        };
        cache.set(digest, principal);
      }
    } catch (err) {
      if (err instanceof AppError && err.code === 'unauthorized') await onRejected(req);
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
      log.debug({ request_id: res.locals.requestId, key_id: principal.keyId }, 'validate-scope key refused');
      throw new AppError('forbidden', 'this API key has the validate scope: it may only validate licences and read status');
    }
    next();
  };
}

export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
