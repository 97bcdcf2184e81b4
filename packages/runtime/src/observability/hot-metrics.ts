import type { Counter, Registry } from 'prom-client';

// Metrics for paths that run thousands of times a second (the gateway's cached validations).
// prom-client hashes a label object and allocates on every inc() and observe(), which cost the
// gateway a few per cent of its CPU per request. The series here are plain numbers, looked up
// once per label set; what they counted reaches Prometheus when metrics are read, so every scrape
// is exact. The text and JSON they render are prom-client's own (packages/runtime/test/unit/hot-metrics.test.ts).

type Labels = Record<string, string>;

const labelsOf = (names: readonly string[], values: readonly string[]): Labels =>
  Object.fromEntries(names.map((name, i) => [name, values[i]]));

/** One series of a counter: counts here, added to the prom-client counter at the next read. */
export class CounterSeries {
  private pending = 0;

  constructor(readonly labels: Labels) {}

  inc(n = 1): void {
    this.pending += n;
  }

  /** Adds what was counted since the last read to the counter (its `collect`). */
  foldInto(counter: Counter<string>): void {
    if (this.pending === 0) return;
    counter.inc(this.labels, this.pending);
    this.pending = 0;
  }
}

/** Series by label values, each made once; label values must come from a bounded set. */
export function seriesTable<S>(labelNames: readonly string[], make: (labels: Labels) => S) {
  const all = new Map<string, S>();
  const lookup = (...values: string[]): S => {
    const id = values.length === 1 ? values[0] : values.join('\u0000');
    let s = all.get(id);
    if (!s) {
      s = make(labelsOf(labelNames, values));
      all.set(id, s);
    }
    return s;
  };
  return { lookup, all: () => all.values() };
}

/** One series of a latency histogram: counts per bucket, kept as numbers. */
export class LatencySeries {
  /** Observations per bucket (not cumulative); the last one is past every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += seconds;
    this.count++;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

interface Value {
  labels: Labels | { le: number | string };
  value: number;
  metricName: string;
  exemplar?: null;
  sharedLabels?: Labels;
}

/**
 * A histogram registered in a prom-client registry as a metric of its own: it renders what
 * prom-client's Histogram would (buckets with `le` first, then `_sum` and `_count`), for the text
 * format and for the JSON that node:cluster workers send their primary to be summed.
 */
export class LatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly table;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    this.table = seriesTable(labelNames, (labels) => new LatencySeries(labels, bounds));
    // prom-client takes any object with its metric shape; its typings only know its own classes.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  labels(...values: string[]): LatencySeries {
    return this.table.lookup(...values);
  }

  /** The text format's form (Registry.metrics() prefers it): series labels as shared labels. */
  async getForPromString() {
    const values: Value[] = [];
    for (const s of this.table.all()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({
          labels: { le },
          value: cumulative,
          metricName: `${this.name}_bucket`,
          exemplar: null,
          sharedLabels: s.labels,
        });
      });
      values.push(
        {
          labels: { le: '+Inf' },
          value: s.count,
          metricName: `${this.name}_bucket`,
          exemplar: null,
          sharedLabels: s.labels,
        },
        { labels: {}, value: s.sum, metricName: `${this.name}_sum`, sharedLabels: s.labels },
        { labels: {}, value: s.count, metricName: `${this.name}_count`, sharedLabels: s.labels },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The JSON form (getMetricsAsJSON, cluster aggregation): series labels merged into each value's. */
  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...value }) => ({
        ...value,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  reset(): void {
    for (const s of this.table.all()) s.reset();
  }
}
