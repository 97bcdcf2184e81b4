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
 * Every series name a process can export: the licensing_ metrics registered in the code (a histogram
 * as its _bucket, _sum and _count), and prom-client's default metrics as a Metrics registry has them.
 */
function exportedNames(): Set<string> {
  const names = new Set<string>();
  const add = (name: string, histogram: boolean) => {
    if (!histogram) names.add(name);
    else for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  };
  const registration = /\.(counter|counterSeries|histogram|latencies|gauge)\(\s*'(licensing_\w+)'/g;
  for (const text of sourceDirs.flatMap(sources)) {
    for (const [, how, name] of text.matchAll(registration)) add(name, how === 'histogram' || how === 'latencies');
    // Metrics made in metrics.ts itself (labelled gauges such as the certificate expiry).
    for (const [, name] of text.matchAll(/new (?:Gauge|Counter)\(\{\s*name: '(licensing_\w+)'/g)) add(name, false);
    for (const [, name] of text.matchAll(/new Histogram\(\{\s*name: '(licensing_\w+)'/g)) add(name, true);
  }
  for (const metric of new Metrics('probe').registry.getMetricsAsArray())
    add(metric.name, (metric as unknown as { type: string }).type === 'histogram');
  return names;
}
const exported = exportedNames();

/** Syntax errors (with their position) and the metric names an expression reads. */
function analyse(expr: string): { errors: string[]; metrics: string[] } {
  const errors: string[] = [];
  const metrics: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError)
        errors.push(`syntax error at ${node.from}: ${JSON.stringify(expr.slice(node.from, node.from + 20))}`);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        metrics.push(expr.slice(node.from, node.to));
    },
  });
  return { errors, metrics };
}

/** Grafana's own variables, as it substitutes them before the query reaches Prometheus. */
const withGrafanaVariables = (expr: string) =>
  expr.replaceAll('$__rate_interval', '1m').replaceAll('$__interval', '1m');

const dashboardTargets: [string, string][] = dashboard.panels.flatMap(
  (p: { title: string; targets?: { expr: string }[] }) =>
    (p.targets ?? []).map((t) => [p.title, withGrafanaVariables(t.expr)] as [string, string]),
);

it('the analysis finds syntax errors and metric names (so the checks below can fail)', () => {
  expect(analyse('sum(rate(foo_total[5m])) / bar').metrics).toEqual(['foo_total', 'bar']);
  expect(analyse('sum(rate(foo_total[5m])) / bar').errors).toEqual([]);
  expect(analyse('sum(rate(foo_total[5m]) >').errors).not.toEqual([]);
  expect(analyse('histogram_quantile(0.99, sum by (le) (rate(x_bucket{a=~"b"}[5m]))').errors).not.toEqual([]);
  expect(exported).toContain('licensing_http_request_duration_seconds_bucket');
  expect(exported).toContain('licensing_tls_certificate_expiry_timestamp_seconds');
  expect(exported).toContain('process_cpu_seconds_total');
  expect(exported).not.toContain('licensing_http_request_duration_seconds');
});

it.each(rules.map((r) => [r.alert, r.expr]))(
  'alert %s: its expression parses and reads exported metrics only',
  (_, expr) => {
    const { errors, metrics } = analyse(expr);
    expect(errors).toEqual([]);
    expect(metrics.length).toBeGreaterThan(0);
    expect(metrics.filter((m) => !exported.has(m))).toEqual([]);
  },
);

it.each(dashboardTargets)('dashboard panel "%s": its query parses and reads exported metrics only', (_, expr) => {
  const { errors, metrics } = analyse(expr);
  expect(errors).toEqual([]);
  expect(metrics.length).toBeGreaterThan(0);
  expect(metrics.filter((m) => !exported.has(m))).toEqual([]);
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

it('the alerts cover what issue 31 names: errors, validation p99, outbox, webhooks, NATS and caches, Redis, certificates', () => {
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
