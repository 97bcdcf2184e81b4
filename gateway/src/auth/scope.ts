import type { NextFunction, Request, Response } from 'express';
import { AppError, type Logger } from '@licensing/runtime';
import { principalOf } from './principal';

// A `validate` key ships inside customers' apps: it may only validate and ask for status.
const VALIDATE_SCOPE_ROUTES = new Set([
  'GET /api/v1/licenses/validate',
  'POST /api/v1/keys/validate',
  'GET /api/v1/status',
]);

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
