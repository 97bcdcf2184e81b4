import type { NextFunction, Request, Response } from 'express';
import type { CounterSeries, LatencySeries, Metrics } from '@licensing/runtime';

/** The series of one method, route template and status: looked up once, then counted with plain arithmetic. */
export class RouteSeries {
  constructor(
    private readonly requests: CounterSeries,
    private readonly duration: LatencySeries,
  ) {}

  observe(startedNs: bigint): void {
    this.requests.inc();
    this.duration.observe(Number(process.hrtime.bigint() - startedNs) / 1e9);
  }
}

/** Request count and latency by method, route template and status; 429s by the window that refused them. */
export class HttpMetrics {
  private readonly requests;
  private readonly duration;
  private readonly rejections;

  constructor(metrics: Metrics) {
    this.requests = metrics.counterSeries('licensing_http_requests_total', ['method', 'route', 'status']);
    this.duration = metrics.latencies('licensing_http_request_duration_seconds', ['method', 'route', 'status']);
    this.rejections = metrics.counter('licensing_rate_limit_rejections_total', ['window']);
  }

  /** The series of a route template (not a path: a bounded set); the fast path keeps its own. */
  of(method: string, route: string, status: number): RouteSeries {
    const code = String(status);
    return new RouteSeries(this.requests(method, route, code), this.duration.labels(method, route, code));
  }

  observe(method: string, route: string, status: number, startedNs: bigint, rateLimitWindow?: unknown): void {
    this.of(method, route, status).observe(startedNs);
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
