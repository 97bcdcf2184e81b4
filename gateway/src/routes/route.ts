import type { Request, RequestHandler, Response, Router } from 'express';
import { AppError } from '@licensing/runtime';
import { roleCovers, type OperationRole } from '@licensing/proto';
import type { Principal } from '../auth/principal';
import {
  checkPathParameters,
  noQuery,
  readBody,
  readQuery,
  type Parsed,
  type QueryShape,
  type Shape,
} from '../request-shapes/shapes';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What one operation validates before its handler runs, and the role it needs (its route table's). */
export interface RequestShapes {
  body?: Shape;
  query?: QueryShape;
  role?: OperationRole;
}

/**
 * Every path and method registered through route(), with the shapes it
 * validates: the unit tests check both against the OpenAPI document.
 */
export const registeredRoutes = new Map<string, Map<Method, RequestShapes>>();

const shapesOf = new WeakMap<RequestHandler, RequestShapes>();

/** A handler that receives the body checked against `shape` (a 400 before it runs otherwise). */
export function withBody<S extends Shape>(
  shape: S,
  handle: (req: Request, res: Response, body: Parsed<S>) => Promise<void>,
): RequestHandler {
  const handler: RequestHandler = async (req, res) => handle(req, res, readBody(req, shape));
  shapesOf.set(handler, { body: shape });
  return handler;
}

/** A handler that receives the query string checked against `shape`. */
export function withQuery<S extends QueryShape>(
  shape: S,
  handle: (req: Request, res: Response, query: Parsed<S>) => Promise<void>,
): RequestHandler {
  const handler: RequestHandler = async (req, res) => handle(req, res, readQuery(req, shape));
  shapesOf.set(handler, { query: shape });
  return handler;
}

/**
 * Path parameters the access log may show: ids (prod_…, we_…), never the licence key (`:key`) nor a
 * capability (`:token`: a download link, an upload grant, which may be all letters and digits); short
 * and plain only.
 */
function loggableIds(params: Record<string, unknown>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(params)) {
    if (name === 'key' || name === 'token' || typeof value !== 'string' || !/^[A-Za-z0-9_]{1,80}$/.test(value))
      continue;
    // The access log writes ids without a scrubbing pass: a secret sent where an id goes stays out.
    if (value.startsWith('lk_') || value.startsWith('whsec_')) continue;
    out ??= {};
    out[name] = value;
  }
  return out;
}

/**
 * Registers the handlers of one API path and answers 405 (with Allow) for every
 * other method on it, so a wrong method is never mistaken for a missing path.
 * Query parameters a handler does not declare (withQuery) are refused with 400.
 * The path template (never the raw URL: ids would explode the series) labels
 * the request metrics.
 */
export function route(
  router: Router,
  path: string,
  handlers: Partial<Record<Method, RequestHandler>>,
  roles: Partial<Record<Method, OperationRole>> = {},
): void {
  const methods = registeredRoutes.get(path) ?? new Map<Method, RequestShapes>();
  registeredRoutes.set(path, methods);
  for (const [method, handler] of Object.entries(handlers) as [Method, RequestHandler][]) {
    const role = roles[method];
    const shapes = { ...shapesOf.get(handler), role };
    methods.set(method, shapes);
    router[method](path, (req, res, next) => {
      res.locals.route = `${req.baseUrl}${path}`;
      res.locals.ids = loggableIds(req.params);
      if (role) checkRole(res, role, method, path);
      // Every operation: no control characters in its path, and no query parameter it does not declare
      // (a handler with a query shape checks its own, as its body's).
      checkPathParameters(req);
      if (!shapes.query) noQuery(req);
      return handler(req, res, next);
    });
  }
  const allow = Object.keys(handlers)
    .map((m) => m.toUpperCase())
    .join(', ');
  router.all(path, (req: Request, res: Response) => {
    res.locals.route = `${req.baseUrl}${path}`;
    res.locals.ids = loggableIds(req.params);
    res.setHeader('Allow', allow);
    throw new AppError('method_not_allowed', `${req.method} is not allowed here; use ${allow}`);
  });
}

/**
 * An API key may call an operation only when its role covers the operation's (proto/rules/roles.ts):
 * otherwise 403 forbidden, naming its role and the one needed. App credentials (validate-scope keys,
 * licences) are held to the app routes before this (auth/scope.ts).
 */
function checkRole(res: Response, needed: OperationRole, method: Method, path: string): void {
  const p: Principal | undefined = res.locals.principal;
  if (p?.credential !== 'api_key' || p.scope !== 'full' || !p.role || roleCovers(p.role, needed)) return;
  throw new AppError(
    'forbidden',
    `this API key's role (${p.role}) cannot call ${method.toUpperCase()} /api/v1${path}: it needs the role ${needed} or above`,
  );
}

/**
 * One row of a resource's route table: a method, a path, the role it needs and the named handler that answers it.
 * `handler` builds the request handler from what the resource's handlers reach (`deps`: the gRPC
 * clients, the licence validator, …), so each route's code is one function a reader finds by name.
 */
export interface RouteRow<Deps> {
  method: Method;
  path: string;
  /** The lowest role that may call it (proto/rules/roles.ts; the OpenAPI document's x-required-role). */
  role: OperationRole;
  handler: (deps: Deps) => RequestHandler;
}

/**
 * Registers a resource's route table: the rows of one path go through route() together (one 405 for
 * the other methods), paths in the order of their first row, so a literal path listed before a
 * parameterised one (/licenses/validate before /licenses/:key) is matched first.
 */
export function registerRouteTable<Deps>(router: Router, table: readonly RouteRow<Deps>[], deps: Deps): void {
  const byPath = new Map<
    string,
    { handlers: Partial<Record<Method, RequestHandler>>; roles: Partial<Record<Method, OperationRole>> }
  >();
  for (const row of table) {
    const entry = byPath.get(row.path) ?? { handlers: {}, roles: {} };
    if (entry.handlers[row.method])
      throw new Error(`${row.method.toUpperCase()} ${row.path} is in the route table twice`);
    entry.handlers[row.method] = row.handler(deps);
    entry.roles[row.method] = row.role;
    byPath.set(row.path, entry);
  }
  for (const [path, { handlers, roles }] of byPath) route(router, path, handlers, roles);
}
