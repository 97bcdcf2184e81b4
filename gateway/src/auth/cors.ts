import type { RequestHandler } from 'express';
import { AppError } from '@licensing/runtime';
import { APP_ROUTES, appRouteOf } from './app-routes';

// Cross-origin calls from a browser page, on the app routes only (validation and what a licence
// credential may call: auth/app-routes.ts), from the origins CORS_ALLOWED_ORIGINS names. Every other
// route (an API key's vendor routes, the dashboard, the portal) sends no CORS header: a vendor's secret
// key belongs on a server, never in a page. No credentials mode: apps send their key in Authorization.

/** Which origins may call: none (the default), any ("*"), or these. */
export type CorsPolicy = { kind: 'none' } | { kind: 'any' } | { kind: 'listed'; origins: ReadonlySet<string> };

/** CORS_ALLOWED_ORIGINS: empty, "*", or origins (scheme://host[:port]) separated by commas. */
export function corsPolicyOf(setting: string): CorsPolicy {
  const items = setting
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) return { kind: 'none' };
  if (items.length === 1 && items[0] === '*') return { kind: 'any' };
  const origins = new Set<string>();
  for (const item of items) {
    let origin: string | undefined;
    try {
      const url = new URL(item);
      if ((url.protocol === 'https:' || url.protocol === 'http:') && `${url.origin}` === item.replace(/\/$/, ''))
        origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (!origin)
      throw new Error(
        `CORS_ALLOWED_ORIGINS: "${item}" is not an origin (scheme://host[:port], no path), nor "*" on its own`,
      );
    origins.add(origin);
  }
  return { kind: 'listed', origins };
}

const allows = (policy: CorsPolicy, origin: string) =>
  policy.kind === 'any' || (policy.kind === 'listed' && policy.origins.has(origin));

/** What a page may read of an answer besides the simple headers: request id, rate limits, retry advice. */
const EXPOSED = [
  'X-Request-Id',
  'Retry-After',
  'RateLimit-Policy',
  'RateLimit',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Location',
].join(', ');
const ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-Request-Id';
const PREFLIGHT_MAX_AGE_S = '600';

/** The methods of the app routes at this path (a preflight is answered for the path, not one route). */
function appMethodsAt(path: string): string[] {
  return [...new Set(APP_ROUTES.map((r) => r.method))].filter((m) => appRouteOf(m, path) !== undefined);
}

/** The headers an answer to this request carries (none unless an allowed origin calls an app route). */
export function corsHeaders(
  policy: CorsPolicy,
  origin: string | undefined,
  method: string,
  path: string,
): Record<string, string> | null {
  if (!origin || !allows(policy, origin) || !appRouteOf(method, path)) return null;
  return {
    'Access-Control-Allow-Origin': policy.kind === 'any' ? '*' : origin,
    'Access-Control-Expose-Headers': EXPOSED,
    ...(policy.kind === 'any' ? {} : { Vary: 'Origin' }),
  };
}

/** A preflight's answer: its headers when the origin may make that call, else null (refused). */
export function preflightHeaders(
  policy: CorsPolicy,
  origin: string,
  requestedMethod: string,
  path: string,
): Record<string, string> | null {
  if (!allows(policy, origin)) return null;
  const methods = appMethodsAt(path);
  if (!methods.includes(requestedMethod.toUpperCase())) return null;
  return {
    'Access-Control-Allow-Origin': policy.kind === 'any' ? '*' : origin,
    'Access-Control-Allow-Methods': methods.join(', '),
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_S,
    ...(policy.kind === 'any' ? {} : { Vary: 'Origin' }),
  };
}

/**
 * Before authentication (a preflight carries no key): answers preflights of /api/v1 (204 with the
 * headers, or 403 saying why not), and puts the CORS headers on an app route's answer, errors included,
 * so a page can read a 401 or a 429 too.
 */
export function cors(policy: CorsPolicy): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (policy.kind === 'none' || typeof origin !== 'string' || !req.path.startsWith('/api/v1/')) return next();
    const requested = req.headers['access-control-request-method'];
    if (req.method === 'OPTIONS' && typeof requested === 'string') {
      const headers = preflightHeaders(policy, origin, requested, req.path);
      if (!headers)
        return next(
          new AppError(
            'forbidden',
            `cross-origin ${requested.toUpperCase()} ${req.path} is not allowed from ${origin}: only the app routes (validation and the licence credential's routes) accept calls from the origins in CORS_ALLOWED_ORIGINS`,
          ),
        );
      res.set(headers).status(204).end();
      return;
    }
    const headers = corsHeaders(policy, origin, req.method, req.path);
    if (headers) res.set(headers);
    next();
  };
}
