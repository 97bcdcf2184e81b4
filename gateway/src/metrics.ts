import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from '@licensing/runtime';

/**
 * Request count and latency by method, route template and status, and 429s by
 * the window that refused them (set in res.locals.rateLimitWindow where the
 * refusal is made). Requests that matched no route share one label.
 */
export function httpMetrics(metrics: Metrics) {
  const requests = metrics.counter('licensing_http_requests_total', ['method', 'route', 'status']);
  const duration = metrics.histogram('licensing_http_request_duration_seconds', ['method', 'route', 'status']);
  const rejections = metrics.counter('licensing_rate_limit_rejections_total', ['window']);
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const labels = { method: req.method, route: routeLabel(req, res), status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      if (res.statusCode === 429) rejections.inc({ window: String(res.locals.rateLimitWindow ?? 'other') });
    });
    next();
  };
}

function routeLabel(req: Request, res: Response): string {
  if (typeof res.locals.route === 'string') return res.locals.route;
  if (req.path === '/healthz' || req.path === '/readyz' || req.path === '/openapi.json' || req.path === '/docs') return req.path;
  if (req.originalUrl.startsWith('/dashboard')) return '/dashboard';
  return 'unmatched';
}
