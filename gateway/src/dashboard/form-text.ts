import type { NextFunction, Request, Response } from 'express';
import { AppError, formTextProblem, textProblem } from '@licensing/runtime';

/**
 * Form fields that may span lines: free text, and lists of entitlement codes (one a line if the vendor
 * likes): tab and line breaks allowed (never other controls).
 */
const MULTILINE_FIELDS = new Set(['description', 'entitlements']);

/**
 * No control characters (the shared rule of @licensing/runtime's text.ts) in any posted field, query
 * value or path segment of the dashboard: a 400 page naming the field, before any handler or service.
 */
export function refuseControlCharacters(req: Request, _res: Response, next: NextFunction): void {
  let path: string | undefined;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    path = undefined; // not percent-encoded UTF-8: the router refuses it (a 400 page)
  }
  const bad =
    formTextProblem(req.body as Record<string, unknown> | undefined, MULTILINE_FIELDS) ??
    formTextProblem(req.query as Record<string, unknown>) ??
    (path === undefined ? undefined : textProblem('path', path));
  if (bad) throw new AppError('invalid_request', bad.message, [bad]);
  next();
}
