import type { NextFunction, Request, Response } from 'express';
import { seriesOf, type Metrics } from '@licensing/runtime';

/** Request count and latency by method, route template and status; 429s by the window that refused them. */
export class HttpMetrics {
  private readonly requests;
  private readonly duration;
  private readonly rejections;

  constructor(metrics: Metrics) {
    this.requests = seriesOf(metrics.counter('licensing_http_requests_total', ['method', 'route', 'status']));
    this.duration = seriesOf(
      metrics.histogram('licensing_http_request_duration_seconds', ['method', 'route', 'status']),
    );
    this.rejections = metrics.counter('licensing_rate_limit_rejections_total', ['window']);
  }

  observe(method: string, route: string, status: number, startedNs: bigint, rateLimitWindow?: unknown): void {
    const code = String(status);
    this.requests(method, route, code).inc(); // route templates, not paths: a bounded set
    this.duration(method, route, code).observe(Number(process.hrtime.bigint() - startedNs) / 1e9);
    if (status === 429) this.rejections.inc({ window: String(rateLimitWindow ?? 'other') });
  }
}

/**
 * Express middleware around HttpMetrics: the window of a 429 is set in
 * res.locals.rateLimitWindow where the refusal is made. Requests that matched
 * no route share one label.
 */
export function httpMetrics(http: HttpMetrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () =>
      http.observe(req.method, routeLabel(req, res), res.statusCode, started, res.locals.rateLimitWindow),
    );
    next();
  };
}

function routeLabel(req: Request, res: Response): string {
  if (typeof res.locals.route === 'string') return res.locals.route;
  if (req.path === '/healthz' || req.path === '/readyz' || req.path === '/openapi.json' || req.path === '/docs')
    return req.path;
  if (req.originalUrl.startsWith('/dashboard')) return '/dashboard';
  return 'unmatched';
}
