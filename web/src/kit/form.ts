import type { NextFunction, Request, Response } from 'express';
import { AppError, formTextProblem, textProblem } from '@licensing/runtime';

// Reading posted forms and query strings of the server-rendered surfaces.

/** One text field of the posted form, cut to `max` characters (longer input is then refused by the service's own limit). */
export const field = (req: Request, name: string, max: number): string => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.slice(0, max) : '';
};

/** A query-string value, or ''. */
export const queryOf = (req: Request, name: string, max: number): string => {
  const v = req.query[name];
  return typeof v === 'string' ? v.trim().slice(0, max) : '';
};

/**
 * No control characters (the shared rule of @licensing/runtime's text.ts) in any posted field, query
 * value or path segment: a 400 page naming the field, before any handler or service. `multiline`:
 * fields that may span lines (tab and line breaks allowed, never other controls).
 */
export function refuseControlCharacters(multiline: ReadonlySet<string> = new Set()) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    let path: string | undefined;
    try {
      path = decodeURIComponent(req.path);
    } catch {
      path = undefined; // not percent-encoded UTF-8: the router refuses it (a 400 page)
    }
    const bad =
      formTextProblem(req.body as Record<string, unknown> | undefined, multiline) ??
      formTextProblem(req.query as Record<string, unknown>) ??
      (path === undefined ? undefined : textProblem('path', path));
    if (bad) throw new AppError('invalid_request', bad.message, [bad]);
    next();
  };
}
