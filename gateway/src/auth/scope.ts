import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@licensing/runtime';
import { checkAppRequest } from './app-routes';
import { principalOf } from './principal';

/**
 * App credentials (a validate-scope key, a licence) may only call the app routes (auth/app-routes.ts),
 * and a licence only for itself; full keys call everything.
 */
export function enforceScope(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const principal = principalOf(res);
    try {
      checkAppRequest(principal, req.method, `${req.baseUrl}${req.path}`, req.query as Record<string, unknown>);
    } catch (err) {
      log.debug({ key_id: principal.keyId, credential: principal.credential }, 'app credential refused');
      throw err;
    }
    next();
  };
}
