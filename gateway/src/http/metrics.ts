import type { Request, Response } from 'express';

/**
 * What the gateway's HTTP series (runtime's HttpMetrics) name a request by: its route template, the
 * probes and the API description by their path, every page passed on to the web component as one
 * label; requests that matched no route share one label.
 */
export function routeLabel(req: Request, res: Response): string {
  if (typeof res.locals.route === 'string') return res.locals.route;
  if (req.path === '/healthz' || req.path === '/readyz' || req.path === '/openapi.json' || req.path === '/docs')
    return req.path;
  if (req.originalUrl.startsWith('/dashboard')) return '/dashboard';
  return 'unmatched';
}
