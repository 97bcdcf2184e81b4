import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { METRIC_HELP, Metrics } from '@licensing/runtime';

// The hot-path series (runtime/observability/hot-metrics.ts) keep plain numbers and reach Prometheus when metrics are
// read: what they render must be exactly what prom-client's own Counter and Histogram render for the same
// counts, in the text format and in the JSON node:cluster workers send their primary to be summed.

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const observations = [0, 0.0004, 0.001, 0.0011, 0.003, 0.02, 0.02, 0.7, 9.99, 10, 11, 250];

/** The same series through prom-client's own classes, in a registry labelled as Metrics labels its own. */
function promClientTwin() {
  const registry = new Registry();
  registry.setDefaultLabels({ component: 'gateway' });
  const latency = new Histogram({
    name: 'licensing_http_request_duration_seconds',
    help: METRIC_HELP.licensing_http_request_duration_seconds,
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const requests = new Counter({
    name: 'licensing_http_requests_total',
    help: METRIC_HELP.licensing_http_requests_total,
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  return { registry, latency, requests };
}

function ours() {
  const metrics = new Metrics('gateway');
  // Only the two metrics compared (Metrics also registers the process's default metrics).
  metrics.registry.clear();
  metrics.registry.setDefaultLabels({ component: 'gateway' });
  const latency = metrics.latencies('licensing_http_request_duration_seconds', ['method', 'route', 'status']);
  const requests = metrics.counterSeries('licensing_http_requests_total', ['method', 'route', 'status']);
  return { registry: metrics.registry, latency, requests };
}

function feed() {
  const twin = promClientTwin();
  const mine = ours();
  for (const [i, v] of observations.entries()) {
    const status = i % 3 === 0 ? '404' : '200';
    twin.latency.observe({ method: 'GET', route: '/api/v1/licenses/validate', status }, v);
    twin.requests.inc({ method: 'GET', route: '/api/v1/licenses/validate', status });
    mine.latency.labels('GET', '/api/v1/licenses/validate', status).observe(v);
    mine.requests('GET', '/api/v1/licenses/validate', status).inc();
  }
  return { twin, mine };
}

describe('hot-path metric series', () => {
  it('render the text format exactly as prom-client does', async () => {
    const { twin, mine } = feed();
    const expected = await twin.registry.metrics();
    expect(expected).toContain('licensing_http_request_duration_seconds_bucket{le="0.001",component="gateway"');
    expect(await mine.registry.metrics()).toBe(expected);
  });

  it('give the JSON that cluster workers send, summed by the primary as prom-client sums its own', async () => {
    const a = feed();
    const b = feed();
    const expected = AggregatorRegistry.aggregate([
      await a.twin.registry.getMetricsAsJSON(),
      await b.twin.registry.getMetricsAsJSON(),
    ]);
    const summed = AggregatorRegistry.aggregate([
      await a.mine.registry.getMetricsAsJSON(),
      await b.mine.registry.getMetricsAsJSON(),
    ]);
    expect(await summed.metrics()).toBe(await expected.metrics());
    expect(await a.mine.registry.getMetricsAsJSON()).toEqual(await a.twin.registry.getMetricsAsJSON());
  });

  it('are exact at every read, counting on from what was read before', async () => {
    const mine = ours();
    const count = async () =>
      Number(
        (await mine.registry.metrics())
          .split('\n')
          .find((l) => l.startsWith('licensing_http_requests_total{'))
          ?.split(' ')
          .pop() ?? 0,
      );
    const series = mine.requests('GET', '/x', '200');
    expect(mine.requests('GET', '/x', '200')).toBe(series); // looked up once
    series.inc();
    series.inc(2);
    expect(await count()).toBe(3);
    expect(await count()).toBe(3);
    series.inc();
    expect(await count()).toBe(4);
  });

  it('are zeroed by a registry reset, as prom-client metrics are', async () => {
    const { twin, mine } = feed();
    twin.registry.resetMetrics();
    mine.registry.resetMetrics();
    mine.latency.labels('GET', '/y', '200').observe(0.5);
    twin.latency.observe({ method: 'GET', route: '/y', status: '200' }, 0.5);
    const text = (r: string) => r.split('\n').filter((l) => l.includes('route="/y"'));
    expect(text(await mine.registry.metrics())).toEqual(text(await twin.registry.metrics()));
  });
});
