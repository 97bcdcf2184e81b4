import type { Request, RequestHandler, Response, Router } from 'express';
import { AppError } from '@licensing/runtime';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Every path and method registered through route(), for the OpenAPI coverage check. */
export const registeredRoutes = new Map<string, Set<Method>>();

/** Path parameters the access log may show: ids (prod_…, we_…), never the licence key (`:key`); short and plain only. */
function loggableIds(params: Record<string, unknown>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(params)) {
    if (name === 'key' || typeof value !== 'string' || !/^[A-Za-z0-9_]{1,80}$/.test(value)) continue;
    out ??= {};
    out[name] = value;
  }
  return out;
}

/**
 * Registers the handlers of one API path and answers 405 (with Allow) for every
 * other method on it, so a wrong method is never mistaken for a missing path.
 * The path template (never the raw URL: ids would explode the series) labels
 * the request metrics.
 */
export function route(router: Router, path: string, handlers: Partial<Record<Method, RequestHandler>>): void {
  const methods = registeredRoutes.get(path) ?? new Set<Method>();
  registeredRoutes.set(path, methods);
  for (const [method, handler] of Object.entries(handlers) as [Method, RequestHandler][]) {
    methods.add(method);
    router[method](path, (req, res, next) => {
      res.locals.route = `${req.baseUrl}${path}`;
      res.locals.ids = loggableIds(req.params);
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
