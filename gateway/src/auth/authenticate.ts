import type { NextFunction, Request, Response } from 'express';
import { AppError, sha256 } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { accountsUnavailable, lookUp } from './account-lookup';
import type { AuthCache } from './auth-cache';
import { bearerKeyOrRefusal } from './bearer';
import type { Principal } from './principal';

/**
 * Bearer auth: the key's principal from the cache, else from the account service (then cached).
 * `onRejected` runs, and is awaited, before a 401 goes out: the per-address failure count is up
 * to date when the client sends its next try, and it may answer 429 instead.
 */
export function authenticate(
  clients: Clients,
  cache: AuthCache,
  onRejected: (req: Request, res: Response) => Promise<void> = async () => undefined,
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    let principal: Principal | undefined;
    try {
      const token = bearerKeyOrRefusal(req.get('authorization'));
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
          principal = accountsUnavailable(err) ? cache.get(digest, token) : undefined;
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
