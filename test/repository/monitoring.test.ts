import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { Metrics } from '@licensing/runtime';

// The shipped monitoring (deploy/monitoring): every PromQL expression of the alert rules and the
// Grafana dashboard parses, and reads only metrics the code exports; the plain rules file and the
// PrometheusRule hold the same rules; every runbook link is a heading of docs/operations.md.

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
const plain = parse(read('deploy/monitoring/alerts.rules.yaml')) as { groups: { name: string; rules: Rule[] }[] };
const crd = parse(read('deploy/monitoring/prometheus-rule.yaml'));
const rules = plain.groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(read('deploy/monitoring/grafana-dashboard.json'));

/** Source folders whose code registers metrics. */
const sourceDirs = [
  'packages/runtime/src',
  'gateway/src',
  ...readdirSync(join(root, 'services')).map((s) => `services/${s}/src`),
];
const sources = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [read(`${dir}/${e.name}`)] : [],
  );

/**
 * Every series name a process can export, with its kind: the licensing_ metrics registered in the
 * code (a histogram as its _bucket, _sum and _count, which count), and prom-client's default metrics
 * as a Metrics registry has them.
 */
function exportedNames(): Map<string, 'counter' | 'gauge'> {
  const names = new Map<string, 'counter' | 'gauge'>();
  const add = (name: string, type: string) => {
    if (type !== 'histogram') names.set(name, type === 'gauge' ? 'gauge' : 'counter');
    else for (const suffix of ['_bucket', '_sum', '_count']) names.set(name + suffix, 'counter');
  };
  const kinds: Record<string, string> = {
    counter: 'counter',
    counterSeries: 'counter',
    histogram: 'histogram',
    latencies: 'histogram',
    gauge: 'gauge',
  };
  const registration = /\.(counter|counterSeries|histogram|latencies|gauge)\(\s*'(licensing_\w+)'/g;
  for (const text of sourceDirs.flatMap(sources)) {
    for (const [, how, name] of text.matchAll(registration)) add(name, kinds[how]);
    // Metrics made with prom-client directly (in metrics.ts: the labelled certificate-expiry gauge).
    for (const [, type, name] of text.matchAll(/new (Gauge|Counter|Histogram)\(\{\s*name: '(licensing_\w+)'/g))
      add(name, type.toLowerCase());
  }
  for (const metric of new Metrics('probe').registry.getMetricsAsArray())
    add(metric.name, (metric as unknown as { type: string }).type);
  return names;
}
const exported = exportedNames();

/** The functions that take a counter's range: a counter read any other way is a mistake, as is a gauge read so. */
const COUNTER_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets']);

interface Read {
  metric: string;
  /** The function whose range selector holds it (rate, max_over_time, ...), or '' when read as an instant vector. */
  via: string;
}

/** Syntax errors (with their position) and the metrics an expression reads. */
function analyse(expr: string): { errors: string[]; metrics: string[]; reads: Read[] } {
  const errors: string[] = [];
  const reads: Read[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError)
        errors.push(`syntax error at ${node.from}: ${JSON.stringify(expr.slice(node.from, node.from + 20))}`);
      if (node.name !== 'Identifier' || node.node.parent?.name !== 'VectorSelector') return;
      const range = node.node.parent.parent;
      const call = range?.name === 'MatrixSelector' ? range.parent?.parent : undefined;
      const via =
        call?.name === 'FunctionCall' && call.firstChild ? expr.slice(call.firstChild.from, call.firstChild.to) : '';
      reads.push({ metric: expr.slice(node.from, node.to), via });
    },
  });
  return { errors, metrics: reads.map((r) => r.metric), reads };
}

/** What is wrong with an expression: syntax errors, metrics no code exports, counters not read as rates. */
function problems(expr: string): string[] {
  const { errors, reads } = analyse(expr);
  const out = [...errors];
  if (!reads.length) out.push('reads no metric');
  for (const { metric, via } of reads) {
    const kind = exported.get(metric);
    if (!kind) out.push(`${metric} is not exported by the code`);
    else if (kind === 'counter' && !COUNTER_FUNCTIONS.has(via))
      out.push(`${metric} is a counter: read it with rate() or increase(), not ${via || 'as it is'}`);
    else if (kind === 'gauge' && COUNTER_FUNCTIONS.has(via))
      out.push(`${metric} is a gauge: ${via}() is meaningless on it`);
  }
  return out;
}

/** Grafana's own variables, as it substitutes them before the query reaches Prometheus. */
const withGrafanaVariables = (expr: string) =>
  expr.replaceAll('$__rate_interval', '1m').replaceAll('$__interval', '1m');

const dashboardTargets: [string, string][] = dashboard.panels.flatMap(
  (p: { title: string; targets?: { expr: string }[] }) =>
    (p.targets ?? []).map((t) => [p.title, withGrafanaVariables(t.expr)] as [string, string]),
);

it('the analysis finds syntax errors, unknown metrics and misread counters (so the checks below can fail)', () => {
  expect(analyse('sum(rate(foo_total[5m])) / bar').metrics).toEqual(['foo_total', 'bar']);
  expect(analyse('sum(rate(foo_total[5m])) / bar').errors).toEqual([]);
  expect(analyse('sum(rate(foo_total[5m]) >').errors).not.toEqual([]);
  expect(analyse('histogram_quantile(0.99, sum by (le) (rate(x_bucket{a=~"b"}[5m]))').errors).not.toEqual([]);
  expect(exported.get('licensing_http_request_duration_seconds_bucket')).toBe('counter');
  expect(exported.get('licensing_tls_certificate_expiry_timestamp_seconds')).toBe('gauge');
  expect(exported.get('licensing_outbox_backlog')).toBe('gauge');
  expect(exported.get('licensing_webhook_deliveries_total')).toBe('counter');
  expect(exported.get('process_cpu_seconds_total')).toBe('counter');
  expect(exported.get('nodejs_heap_size_used_bytes')).toBe('gauge');
  expect(exported.has('licensing_http_request_duration_seconds')).toBe(false);
  expect(problems('sum(rate(licensing_http_requests_total[5m]))')).toEqual([]);
  expect(problems('licensing_http_request_total > 0')).toEqual([
    'licensing_http_request_total is not exported by the code',
  ]);
  expect(problems('licensing_emails_total > 0')).toEqual([expect.stringContaining('is a counter')]);
  expect(problems('rate(licensing_outbox_backlog[5m])')).toEqual([expect.stringContaining('is a gauge')]);
  expect(problems('max_over_time(licensing_nats_connected[5m]) == 0')).toEqual([]);
});

it.each(rules.map((r) => [r.alert, r.expr]))(
  'alert %s: its expression parses and reads exported metrics rightly',
  (_, expr) => {
    expect(problems(expr)).toEqual([]);
  },
);

it.each(dashboardTargets)('dashboard panel "%s": its query parses and reads exported metrics rightly', (_, expr) => {
  expect(problems(expr)).toEqual([]);
});

it('every alert has a severity, a summary, a description and a runbook; names are unique', () => {
  for (const r of rules) {
    expect(['critical', 'warning', 'info']).toContain(r.labels?.severity);
    expect(r.annotations).toEqual(
      expect.objectContaining({
        summary: expect.any(String),
        description: expect.any(String),
        runbook_url: expect.any(String),
      }),
    );
    if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smh]$/);
  }
  expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
});

it('the alerts cover errors, validation p99, outbox, webhooks, NATS and caches, Redis and certificates', () => {
  const reads = (metric: string) => rules.filter((r) => analyse(r.expr).metrics.includes(metric)).map((r) => r.alert);
  for (const metric of [
    'licensing_http_requests_total',
    'licensing_http_request_duration_seconds_bucket',
    'licensing_outbox_backlog',
    'licensing_outbox_oldest_age_seconds',
    'licensing_webhook_deliveries_total',
    'licensing_webhook_queued',
    'licensing_nats_connected',
    'licensing_validation_cache_total',
    'licensing_license_cache_total',
    'licensing_rate_limit_fallback',
    'licensing_tls_certificate_expiry_timestamp_seconds',
  ])
    expect([metric, reads(metric)]).toEqual([metric, expect.arrayContaining([expect.any(String)])]);
});

it('the PrometheusRule holds exactly the rules of the plain rules file', () => {
  expect(crd).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
  expect(crd.metadata.name).toMatch(/^[a-z0-9-]+$/);
  expect(Object.keys(crd.spec)).toEqual(['groups']);
  expect(crd.spec).toEqual(plain);
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

it('every runbook link points at a heading of docs/operations.md', () => {
  const anchors = new Set([...read('docs/operations.md').matchAll(/^#{1,6} (.+)$/gm)].map(([, h]) => anchorOf(h)));
  for (const r of rules) {
    const [path, anchor] = r.annotations.runbook_url.split('#');
    expect([r.alert, path]).toEqual([r.alert, 'docs/operations.md']);
    expect([r.alert, anchors.has(anchor)]).toEqual([r.alert, true]);
  }
});
