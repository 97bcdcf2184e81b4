import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CounterSeries, LatencySeries } from './hot-metrics';
import type { Metrics } from './metrics';

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

/**
 * Request count and latency by method, route template and status; 429s by the window that refused them.
 * The series every HTTP component (the gateway, the web component) gives its /metrics, so one dashboard
 * and one set of alerts read them all.
 */
export class HttpMetrics {
  private readonly requests;
  private readonly duration;
  private readonly rejections;

  constructor(metrics: Metrics) {
    this.requests = metrics.counterSeries('licensing_http_requests_total', ['method', 'route', 'status']);
    this.duration = metrics.latencies('licensing_http_request_duration_seconds', ['method', 'route', 'status']);
    this.rejections = metrics.counter('licensing_rate_limit_rejections_total', ['window']);
  }

  /** The series of a route template (not a path: a bounded set); the gateway's fast path keeps its own. */
  of(method: string, route: string, status: number): RouteSeries {
    const code = String(status);
    return new RouteSeries(this.requests(method, route, code), this.duration.labels(method, route, code));
  }

  observe(method: string, route: string, status: number, startedNs: bigint, rateLimitWindow?: unknown): void {
    this.of(method, route, status).observe(startedNs);
    if (status === 429) this.rejections.inc({ window: String(rateLimitWindow ?? 'other') });
  }
}

/** The response as an Express-style app holds it: `locals` carries what the request's handlers found. */
type LocalsResponse = ServerResponse & { locals: Record<string, unknown> };

/**
 * Middleware (Express's shape) around HttpMetrics: `label` names the request's series (a bounded set:
 * route templates, never paths); the window of a 429 is read from res.locals.rateLimitWindow, set where
 * the refusal is made.
 */
export function httpMetrics<Req extends IncomingMessage, Res extends LocalsResponse>(
  http: HttpMetrics,
  label: (req: Req, res: Res) => string,
) {
  return (req: Req, res: Res, next: () => void) => {
    const started = process.hrtime.bigint();
    res.on('finish', () =>
      http.observe(req.method ?? '', label(req, res), res.statusCode, started, res.locals.rateLimitWindow),
    );
    next();
  };
}
