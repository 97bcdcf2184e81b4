import { createServer, type Server } from 'node:http';
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CounterSeries, LatencyHistogram, seriesTable } from './hot-metrics';

// Every metric name of the system lives here, so docs/operations.md can list
// them and nothing invents a second spelling. All are prefixed `licensing_`;
// each process also exports prom-client's default process metrics.
export const METRIC_HELP = {
  licensing_http_requests_total:
    'HTTP requests answered by the gateway and the web component, by method, route template (the web component: its surface) and status',
  licensing_http_request_duration_seconds:
    'Time from request to response in the gateway and the web component, by method, route template and status',
  licensing_rate_limit_rejections_total:
    'Requests refused with 429, by window (minute, license_minute, hour, app_hour, auth_failures, checkout_page, stripe_webhook, signin, signup)',
  licensing_grpc_server_handled_total: 'gRPC calls a service finished, by method and status code',
  licensing_grpc_server_handling_seconds: 'Time a service spent on a gRPC call, by method',
  licensing_grpc_health_checks_total:
    'gRPC health checks a service answered, by probe (readiness, liveness): from orchestrators and the gateway',
  licensing_validations_total:
    'Licence validations, by result code (valid, expired, suspended, ...): the gateway counts those it answers from its cache, the licence service the rest',
  licensing_validation_cache_evictions_total:
    'Validation-cache evictions at the gateway, by the event that caused them',
  licensing_validation_cache_total:
    'Validations at the gateway, by cache result (hit, miss, bypass = cache off or NATS away)',
  licensing_validation_counts_dropped_total:
    'Validation counts a gateway dropped, oldest first, because more than it keeps waited for the licence service (or one was too large to send), by kind (tally, last_validated, seen)',
  licensing_validation_telemetry_dropped_total:
    'Validation telemetry the licence service dropped because more than it keeps in memory waited for its next flush (a flood of distinct licences or machines), by kind (hour, last_validated, recent, seen)',
  licensing_license_cache_total:
    'Licence reads for validations at the licence service, by cache result (hit, miss, bypass = cache off or NATS away)',
  licensing_eviction_feed_lost_total:
    'Times a cache stopped trusting its feed of eviction events (a sequence gap, a silence, a lost connection, a consumer that could not be made), emptied itself and answered from the source until it followed them again, by reason',
  licensing_events_published_total: 'Domain events JetStream accepted (duplicates not counted), by event type',
  licensing_outbox_backlog: 'Documents holding events not yet acknowledged by JetStream',
  licensing_outbox_oldest_age_seconds:
    'Age of the oldest event a document still holds (published ones are cleared a few seconds later; past 4000 pending documents a lower bound): minutes mean events wait for JetStream',
  licensing_nats_connected:
    'Whether this process is connected to NATS (1) or not (0): while not, its caches are bypassed',
  licensing_rate_limit_fallback:
    'Whether the gateway counts rate limits in its own memory because Redis is away (1) or in Redis (0)',
  licensing_webhook_queued: 'Webhook deliveries queued or in flight at this webhook service instance',
  licensing_tls_certificate_expiry_timestamp_seconds:
    "When the certificate this process serves with expires (Unix time), by certificate (https: the gateway's TLS_CERT_FILE, grpc: the internal mTLS one)",
  licensing_store_reconnects_total:
    'Times a service reconnected its store client because the store answered TCP but the driver had found no server for a while (a monitor stuck after a cut link)',
  licensing_webhook_deliveries_total: 'Webhook delivery attempts, by outcome (delivered, retry, failed, gone, dropped)',
  licensing_emails_total:
    'Customer e-mail attempts (notification service), by outcome (sent, retry, failed; dropped: a sign-in for an address holding no licence, or never confirmed; released: given back unsent by a stop)',
} as const;

type MetricName = keyof typeof METRIC_HELP;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One registry per component instance (tests run several in one process), with
 * a `component` label on every series so one Prometheus job can scrape all.
 */
export class Metrics {
  readonly registry = new Registry();

  constructor(component: string) {
    this.registry.setDefaultLabels({ component });
    // The event-loop-lag histogram samples with a timer; prom-client's default (every 10 ms) cost
    // 0.6 % of a core per idle process, most of the whole system's idle CPU. Every 100 ms: 0.08 %.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
  }

  counter<L extends string>(name: MetricName, labelNames: readonly L[]): Counter<L> {
    return new Counter({ name, help: METRIC_HELP[name], labelNames, registers: [this.registry] });
  }

  histogram<L extends string>(name: MetricName, labelNames: readonly L[]): Histogram<L> {
    return new Histogram({
      name,
      help: METRIC_HELP[name],
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
  }

  /** A counter whose series are bumped on a hot path (hot-metrics.ts): look a series up once, then inc() it. */
  counterSeries(name: MetricName, labelNames: readonly string[]): (...values: string[]) => CounterSeries {
    const table = seriesTable(labelNames, (labels) => new CounterSeries(labels));
    new Counter({
      name,
      help: METRIC_HELP[name],
      labelNames,
      registers: [this.registry],
      collect() {
        for (const series of table.all()) series.foldInto(this);
      },
    });
    return table.lookup;
  }

  /** A latency histogram whose series observe with plain arithmetic (hot-metrics.ts). */
  latencies(name: MetricName, labelNames: readonly string[]): LatencyHistogram {
    return new LatencyHistogram(name, METRIC_HELP[name], labelNames, LATENCY_BUCKETS, this.registry);
  }

  /**
   * A gauge read at each scrape. `aggregator` says how a clustered gateway's primary combines its
   * workers' values (prom-client sums by default, right for counts, wrong for states and times).
   */
  gauge(name: MetricName, collect: () => Promise<number>, aggregator?: 'sum' | 'min' | 'max'): Gauge {
    return new Gauge({
      name,
      help: METRIC_HELP[name],
      registers: [this.registry],
      ...(aggregator ? { aggregator } : {}),
      async collect() {
        this.set(await collect());
      },
    });
  }

  private certificates?: Gauge<'certificate'>;

  /** Records when a certificate this process serves with expires (again after a reload). */
  certificateExpiry(certificate: 'https' | 'grpc', pem: Buffer | string): void {
    this.certificates ??= new Gauge({
      name: 'licensing_tls_certificate_expiry_timestamp_seconds',
      help: METRIC_HELP.licensing_tls_certificate_expiry_timestamp_seconds,
      labelNames: ['certificate'],
      registers: [this.registry],
      aggregator: 'min',
    });
    // The first certificate of a chain is the one served.
    this.certificates.set({ certificate }, Date.parse(new X509Certificate(pem).validTo) / 1000);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** A plain HTTP listener for Prometheus next to a gRPC service: GET /metrics, nothing else. */
export function serveMetrics(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<{ port: number; close(): Promise<void> }> {
  return serveRendered(() => metrics.render(), host, port);
}

/**
 * In a node:cluster worker: its metrics are served by the primary, summed with its
 * siblings' (serveClusterMetrics), not on a port of its own.
 */
export function shareMetricsWithPrimary(metrics: Metrics): { port: number; close(): Promise<void> } {
  AggregatorRegistry.setRegistries([metrics.registry]);
  new AggregatorRegistry(); // prom-client answers the primary's requests only once one exists in the worker
  return { port: 0, close: async () => undefined };
}

/** In a node:cluster primary: GET /metrics answers every worker's metrics, summed. */
export function serveClusterMetrics(host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
  const aggregator = new AggregatorRegistry();
  return serveRendered(
    async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }),
    host,
    port,
  );
}

async function serveRendered(
  render: () => Promise<{ contentType: string; body: string }>,
  host: string,
  port: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: only GET /metrics is served here\n');
      return;
    }
    render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
