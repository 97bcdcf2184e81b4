import { AppError } from '@licensing/runtime';
import { parseLicenseKey } from '@licensing/proto';
import type { Principal } from './principal';

// The routes app credentials may call: a "License <key>" credential (for its own licence only) and
// a validate-scope API key (for any licence of its account: the key in the request is the proof of
// possession). Pure: matched on the method and path as sent (gateway/test/unit/app-credentials.test.ts).

/**
 * Where a route names its licence: the query (license_key), the body (key), the path ({key}), or by its
 * product ({id}); 'release': a release's file, whose product the route checks against the licence's.
 */
export type LicenseNamedIn = 'query' | 'body' | 'path' | 'product' | 'release';

export interface AppRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** As the OpenAPI document writes it. */
  path: string;
  namedIn: LicenseNamedIn;
  /** A validation: answered (valid: false with its code) even for a revoked, suspended or unknown licence. */
  validation: boolean;
  /** A heartbeat of one activation: budgeted per activation, not from the licence's minute (rate-limits/budgets.ts). */
  heartbeat?: true;
  /**
   * The licence key may come as ?license_key= instead of an Authorization header (an updater such as
   * Sparkle cannot always send headers, and a feed's download links must work on their own). The
   * access log never writes it (its query's secrets are redacted).
   */
  keyInQuery?: true;
  /** Refusals are the route's own (403 with the validation code): a licence that is not active gets there too. */
  judged?: true;
}

export const APP_ROUTES: readonly AppRoute[] = [
  { method: 'GET', path: '/api/v1/licenses/validate', namedIn: 'query', validation: true },
  { method: 'POST', path: '/api/v1/keys/validate', namedIn: 'body', validation: true },
  { method: 'GET', path: '/api/v1/licenses/{key}', namedIn: 'path', validation: false },
  { method: 'POST', path: '/api/v1/licenses/{key}/activations', namedIn: 'path', validation: false },
  { method: 'GET', path: '/api/v1/licenses/{key}/activations', namedIn: 'path', validation: false },
  { method: 'DELETE', path: '/api/v1/licenses/{key}/activations/{id}', namedIn: 'path', validation: false },
  {
    method: 'POST',
    path: '/api/v1/licenses/{key}/activations/{id}/heartbeat',
    namedIn: 'path',
    validation: false,
    heartbeat: true,
  },
  { method: 'POST', path: '/api/v1/licenses/{key}/file', namedIn: 'path', validation: false },
  // Every seat taken: the app asks for the owner to be e-mailed a portal link to the licence's machines.
  { method: 'POST', path: '/api/v1/licenses/{key}/seat-rescue', namedIn: 'path', validation: false },
  { method: 'GET', path: '/api/v1/products/{id}/signing-keys', namedIn: 'product', validation: false },
  // Release files and update feeds: what the licence may have is judged by the route (403 with its code).
  {
    method: 'GET',
    path: '/api/v1/releases/{id}/artifacts/{filename}',
    namedIn: 'release',
    validation: false,
    keyInQuery: true,
    judged: true,
  },
  ...(['updates', 'appcast.xml', 'updates/tauri/{target}/{arch}/{current_version}'] as const).map(
    (feed): AppRoute => ({
      method: 'GET',
      path: `/api/v1/products/{id}/${feed}`,
      namedIn: 'product',
      validation: false,
      keyInQuery: true,
      judged: true,
    }),
  ),
];

/** Besides the app routes, a validate-scope key may read status (its rate limits); a licence may not. */
export const STATUS_ROUTE = 'GET /api/v1/status';

/** What a 403 tells a licence credential it may do. */
export const LICENSE_MAY =
  "a License credential may only validate its licence (GET /api/v1/licenses/validate, POST /api/v1/keys/validate), read it (GET /api/v1/licenses/{key}), manage its activations (POST, GET /api/v1/licenses/{key}/activations, DELETE …/activations/{id}, POST …/activations/{id}/heartbeat), get its licence file (POST /api/v1/licenses/{key}/file), ask for a seat rescue (POST /api/v1/licenses/{key}/seat-rescue) and get its product's signing keys (GET /api/v1/products/{id}/signing-keys), check for updates (GET /api/v1/products/{id}/updates, appcast.xml, updates/tauri/…) and download its releases' files (GET /api/v1/releases/{id}/artifacts/{filename}); use an API key for anything else";

export const VALIDATE_KEY_MAY =
  "this API key has the validate scope: it may only validate licences, read a licence, manage its activations, get its licence file, ask for a seat rescue, get its product's signing keys, check for updates and download release files for a licence (?license_key=), and read status";

/** A request on an app route, with the licence key (as sent, decoded), product id or activation id its path names. */
export interface AppRouteMatch {
  route: AppRoute;
  key?: string;
  productId?: string;
  activationId?: string;
}

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/** The app route a method and path (`/api/v1/…`, no query) are, if any. */
export function appRouteOf(method: string, path: string): AppRouteMatch | undefined {
  const parts = path.split('/');
  // '', 'api', 'v1', …
  if (parts.length < 4 || parts[1] !== 'api' || parts[2] !== 'v1') return undefined;
  for (const route of APP_ROUTES) {
    if (route.method !== method) continue;
    const template = route.path.split('/');
    if (template.length !== parts.length) continue;
    let key: string | undefined;
    let productId: string | undefined;
    let activationId: string | undefined;
    let ok = true;
    for (let i = 3; i < template.length && ok; i++) {
      const t = template[i];
      const value = parts[i];
      if (t === '{key}') {
        key = decode(value);
        ok = !!key && key !== 'validate'; // GET /licenses/validate is the validation, never a key
      } else if (t === '{id}') {
        const id = decode(value);
        ok = !!id;
        if (route.namedIn === 'product') productId = id;
        else activationId = id;
      } else if (t.startsWith('{'))
        ok = !!decode(value); // {filename}, {target}…: the route reads them
      else ok = t === value;
    }
    if (ok) return { route, key, productId, activationId };
  }
  return undefined;
}

/**
 * Is `sent` (as the request gives it) the canonical licence key `own`? Compared in constant time:
 * every character, whatever differs (canonical keys all have one length; no buffers on the hot path).
 */
export function sameLicense(own: string, sent: string): boolean {
  const parsed = parseLicenseKey(sent);
  return parsed.ok && sameCanonicalKey(own, parsed.key);
}

/** Two canonical licence keys compared in constant time. */
export function sameCanonicalKey(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let differs = 0;
  for (let i = 0; i < a.length; i++) differs |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differs === 0;
}

/** A licence credential names another licence: 404, as if it did not exist (the licence service's own words). */
export function checkOwnLicense(p: Principal, sent: unknown): void {
  if (p.credential !== 'license' || typeof sent !== 'string') return;
  if (!sameLicense(p.license!.key, sent)) throw AppError.notFound('licence');
}

/**
 * What an app credential may do on this request (throws the refusal): a licence that is not active
 * (or unknown) only validates (401 elsewhere); a licence acts on its own licence and product only
 * (404 for another, as if it did not exist); any other route is 403. The key a body names is checked
 * by the route once the body is read (checkOwnLicense).
 */
export function checkAppRequest(p: Principal, method: string, path: string, query: Record<string, unknown>): void {
  if (p.scope !== 'validate') return;
  const match = appRouteOf(method, path);
  if (p.credential !== 'license') {
    if (!match && `${method} ${path}` !== STATUS_ROUTE) throw new AppError('forbidden', VALIDATE_KEY_MAY);
    return;
  }
  const license = p.license!;
  if (license.status !== 'active' && !match?.route.validation && !match?.route.judged)
    throw new AppError(
      'unauthorized',
      license.status === 'unknown'
        ? 'no licence has this key: it may only be validated (the answer is not_found)'
        : `this licence is ${license.status}: it may only be validated`,
    );
  if (!match) throw new AppError('forbidden', LICENSE_MAY);
  if (match.key !== undefined && !sameLicense(license.key, match.key)) throw AppError.notFound('licence');
  if (match.productId !== undefined && match.productId !== license.productId) throw AppError.notFound('product');
  if (match.route.namedIn === 'query') checkOwnLicense(p, query.license_key);
}
