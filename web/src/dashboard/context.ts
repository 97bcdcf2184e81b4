import type { Request, Response } from 'express';
import { AppError, isId } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { field, queryOf } from '../kit/form';
import type { DashboardSession } from './session';
import type { Html } from '../kit/template';

export { field, queryOf };

export type Handler = (req: Request, res: Response) => Promise<void> | void;
export type SignedInHandler = (req: Request, res: Response, s: DashboardSession) => Promise<void>;

/** What every area of the dashboard (products, licences, …) is built from. */
export interface DashboardContext {
  clients: Clients;
  /** Requests counted in the account's current hourly window (Redis), or with `app` its app allowance's; undefined without it. */
  hourlyUsage?: (accountId: string, app?: boolean) => Promise<{ used: number; resetsInS: number } | undefined>;
  /** Requests one licence may make per minute (LICENSE_PER_MINUTE), shown with the plan's limits. */
  licensePerMinute?: number;
  /** The gateway's public address, for the customer portal link ('' or absent: the request's origin). */
  publicBaseUrl?: string;
  page(res: Response, status: number, page: Html): void;
  /** Pages behind sign-in (signed-in.ts): metered unless told otherwise; a POST must also carry the session's CSRF token. */
  signedIn(handler: SignedInHandler, opts?: { metered?: boolean }): Handler;
}

/** A repeated field (checkboxes): every string value, at most `maxItems`. */
export const fieldList = (req: Request, name: string, maxItems: number, max: number): string[] => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  const all = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return all
    .filter((x): x is string => typeof x === 'string')
    .slice(0, maxItems)
    .map((x) => x.slice(0, max));
};

/** Messages for a form: per field (shown next to it) and one for the whole form. */
export interface FormErrors {
  form?: string;
  fields: Record<string, string>;
}

/**
 * Refused input (400) and refused actions (409) become messages on the form;
 * anything else is rethrown to the dashboard's error page. `rename` maps the
 * services' field names (policy.grace_days) to the form's (grace_days).
 */
export function formErrorsOf(err: unknown, rename: (f: string) => string = (f) => f): FormErrors & { status: number } {
  if (!(err instanceof AppError) || !['invalid_request', 'conflict'].includes(err.code)) throw err;
  const fields: Record<string, string> = {};
  for (const f of err.fieldErrors) fields[rename(f.field)] ??= f.message;
  return {
    status: err.code === 'conflict' ? 409 : 400,
    fields,
    form: err.fieldErrors.length ? undefined : err.message,
  };
}

/** A whole number typed into a form: '' = absent; anything else not an integer is the field's error. */
export function wholeNumber(raw: string, name: string, errors: Record<string, string>): number | undefined {
  const v = raw.trim();
  if (!v) return undefined;
  // Nine digits at most: every count here fits a 32-bit field, and the service checks the real range.
  if (!/^-?\d{1,9}$/.test(v)) {
    errors[name] = 'Enter a whole number, such as 30.';
    return undefined;
  }
  return Number(v);
}

/** An id of the expected kind, or a not-found error (the dashboard's 404 page) before any service is asked. */
export function idOrNotFound(prefix: string, raw: string, what: string): string {
  if (!isId(prefix, raw)) throw AppError.notFound(what);
  return raw;
}
