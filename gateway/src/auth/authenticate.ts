import type { NextFunction, Request, Response } from 'express';
import { AppError, requestOrigin, setRequestOrigin, sha256 } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { accountsUnavailable, lookUp } from './account-lookup';
import { appRouteOf } from './app-routes';
import type { AuthCache } from './auth-cache';
import { credentialOrRefusal } from './credential';
import type { LicenseCredentials } from './license-credentials';
import type { Principal } from './principal';

/**
 * Auth: "Bearer <API key>" (the key's principal from the auth cache, else from the account service,
 * then cached) or "License <licence key>" (the licence's, from LicenseCredentials). `onRejected`
 * runs, and is awaited, before a 401 goes out, and for a licence key no licence has: the per-address
 * failure count is up to date when the client sends its next try, and it may answer 429 instead.
 * An unknown licence key still passes here (it may validate, and gets not_found): scope.ts refuses
 * it everywhere else.
 */
export function authenticate(
  clients: Clients,
  cache: AuthCache,
  licenses: LicenseCredentials,
  onRejected: (req: Request, res: Response) => Promise<void> = async () => undefined,
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    let principal: Principal | undefined;
    try {
      const credential = credentialOrRefusal(req.get('authorization') ?? queryCredential(req));
      if (credential.kind === 'license') {
        principal = await licenses.principalOf(credential.key);
        if (principal.license!.status === 'unknown') await onRejected(req, res);
      } else principal = await apiKeyPrincipal(clients, cache, credential.token);
    } catch (err) {
      if (err instanceof AppError && err.code === 'unauthorized') await onRejected(req, res);
      throw err;
    }
    res.locals.principal = principal;
    // Who asks, for the events this request makes (the audit log): the key, or the app's licence.
    setRequestOrigin(
      requestOrigin(
        principal.credential === 'license'
          ? { type: 'license', id: principal.keyId }
          : { type: 'api_key', id: principal.keyId },
        req.ip,
        req.headers['user-agent'],
      ),
    );
    next();
  };
}

/**
 * "License <key>" made of ?license_key= on the routes that take it without a header (feeds and the
 * downloads they link to: auth/app-routes.ts, keyInQuery); undefined anywhere else.
 */
function queryCredential(req: Request): string | undefined {
  const key = req.query.license_key;
  if (typeof key !== 'string' || !appRouteOf(req.method, `${req.baseUrl}${req.path}`)?.route.keyInQuery)
    return undefined;
  return `License ${key}`;
}

async function apiKeyPrincipal(clients: Clients, cache: AuthCache, token: string): Promise<Principal> {
  const digest = sha256(token, 'hex');
  let principal = cache.get(digest, token);
  if (principal) return principal;
  const since = cache.begin();
  try {
    principal = await lookUp(clients, token);
    cache.noteAnswer();
    cache.set(digest, principal, since);
    return principal;
  } catch (err) {
    cache.noteAnswer(err);
    // The account service is away and this key was verified recently: served as get() now would.
    principal = accountsUnavailable(err) ? cache.get(digest, token) : undefined;
    if (!principal) throw err;
    return principal;
  }
}
