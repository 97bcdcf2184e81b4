import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { ConfigError } from '../core/config';

export { SpanKind, type Context as TraceContext, type Span };

// OpenTelemetry tracing, configured only by the standard OTEL_* variables and off unless an OTLP
// endpoint is set. Off, nothing here runs on a request: callers hold `Tracing | undefined` and test it
// once, and the SDK (sdk-trace, the exporters) is not even loaded. On, each component has its own
// tracer (its own `service.name`, even when tests run several in one process), and the trace context
// travels explicitly: in the call scope (core/request-scope.ts) within a process, as `traceparent`
// in gRPC metadata, NATS headers and stored work (outbox events, webhook deliveries) between them.

const propagator = new W3CTraceContextPropagator();
const getter: TextMapGetter<Record<string, string | undefined>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/** The context a W3C `traceparent` (and optional `tracestate`) names; undefined when absent or malformed. */
export function remoteContext(traceparent: unknown, tracestate?: unknown): Context | undefined {
  if (typeof traceparent !== 'string' || !traceparent) return undefined;
  const ctx = propagator.extract(
    ROOT_CONTEXT,
    { traceparent, tracestate: typeof tracestate === 'string' ? tracestate : undefined },
    getter,
  );
  return trace.getSpanContext(ctx) ? ctx : undefined;
}

/** The `traceparent` header value of a context's span (undefined without one). */
export function traceparentOf(ctx: Context | undefined): string | undefined {
  if (!ctx) return undefined;
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, {
    set(c, k, v) {
      c[k] = v;
    },
  });
  return carrier.traceparent;
}

/** The trace and span ids log lines carry (undefined outside a traced call). */
export function traceIdsOf(ctx: Context | undefined): { trace_id: string; span_id: string } | undefined {
  const sc = ctx && trace.getSpanContext(ctx);
  return sc ? { trace_id: sc.traceId, span_id: sc.spanId } : undefined;
}

/** A started span and the context its children use. */
export interface StartedSpan {
  span: Span;
  context: Context;
}

/** One component's tracer: the spans it starts carry its service name. */
export class Tracing {
  constructor(
    private readonly tracer: Tracer,
    private readonly provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> },
  ) {}

  /** A span of this component, child of `parent` (a new trace when undefined). */
  start(name: string, kind: SpanKind, parent: Context | undefined, attributes?: Attributes): StartedSpan {
    const ctx = parent ?? ROOT_CONTEXT;
    const span = this.tracer.startSpan(name, { kind, attributes }, ctx);
    return { span, context: trace.setSpan(ctx, span) };
  }

  /** Sends what is buffered (tests, and a graceful stop). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  /** Sends what is buffered and stops exporting (a graceful stop). */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

/** Ends a span with an outcome: an error (a message, or true) marks it failed. */
export function endSpan(span: Span, error?: string | boolean, attributes?: Attributes): void {
  if (attributes) span.setAttributes(attributes);
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: typeof error === 'string' ? error : undefined });
  span.end();
}

export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';
const SAMPLERS: readonly SamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

export interface TracingSettings {
  /** Where spans are sent (the traces endpoint, …/v1/traces). */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  timeoutMs: number;
  sampler: SamplerName;
  /** The ratio of the *traceidratio samplers (1 otherwise). */
  ratio: number;
  /** Resource attributes: service.name and OTEL_RESOURCE_ATTRIBUTES. */
  resource: Record<string, string>;
  batch: {
    scheduledDelayMillis: number;
    exportTimeoutMillis: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
  };
}

type Env = Record<string, string | undefined>;

/**
 * The tracing a component's OTEL_* variables ask for, or undefined: off when OTEL_SDK_DISABLED is
 * true, OTEL_TRACES_EXPORTER is `none`, or no endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or
 * OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces) is set. Values this project cannot honour (gRPC, an
 * unknown sampler, a ratio outside 0–1) are configuration errors, not silently ignored.
 */
export function tracingSettings(defaultServiceName: string, env: Env): TracingSettings | undefined {
  const get = (name: string) => env[name]?.trim() || undefined;
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporter = get('OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter === 'none') return undefined;
  if (exporter && exporter !== 'otlp')
    throw new ConfigError(`OTEL_TRACES_EXPORTER=${exporter} is not supported: use otlp (or none)`);
  const signal = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = get('OTEL_EXPORTER_OTLP_ENDPOINT');
  const url = signal ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return undefined;
  if (!/^https?:\/\/[^\s]+$/i.test(url))
    throw new ConfigError(`the OTLP traces endpoint must be an http(s) URL: ${url}`);
  const protocol = (get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? get('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf')
    .toLowerCase()
    .trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json')
    throw new ConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json (OTLP over HTTP, port 4318)`,
    );
  const sampler = (get('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase() as SamplerName;
  if (!SAMPLERS.includes(sampler))
    throw new ConfigError(`OTEL_TRACES_SAMPLER=${sampler} is not supported: use one of ${SAMPLERS.join(', ')}`);
  const ratioText = get('OTEL_TRACES_SAMPLER_ARG');
  const ratio = sampler.endsWith('traceidratio') && ratioText !== undefined ? Number(ratioText) : 1;
  if (!(ratio >= 0 && ratio <= 1))
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, not ${ratioText}`);
  const resource = parseKeyValues(get('OTEL_RESOURCE_ATTRIBUTES'), 'OTEL_RESOURCE_ATTRIBUTES');
  resource['service.name'] = get('OTEL_SERVICE_NAME') ?? resource['service.name'] ?? defaultServiceName;
  return {
    url,
    protocol,
    headers: {
      ...parseKeyValues(get('OTEL_EXPORTER_OTLP_HEADERS'), 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...parseKeyValues(get('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    timeoutMs: millis(get, ['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT'], 10_000),
    sampler,
    ratio,
    resource,
    batch: {
      scheduledDelayMillis: millis(get, ['OTEL_BSP_SCHEDULE_DELAY'], 5000),
      exportTimeoutMillis: millis(get, ['OTEL_BSP_EXPORT_TIMEOUT'], 30_000),
      maxQueueSize: millis(get, ['OTEL_BSP_MAX_QUEUE_SIZE'], 2048),
      maxExportBatchSize: millis(get, ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE'], 512),
    },
  };
}

/** The first of these variables that is set, as a non-negative integer (else the default). */
function millis(get: (name: string) => string | undefined, names: string[], fallback: number): number {
  for (const name of names) {
    const text = get(name);
    if (text === undefined) continue;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${name} must be a whole number ≥ 0, not ${text}`);
    return n;
  }
  return fallback;
}

/** `k1=v1,k2=v2` with percent-encoded values (the W3C baggage form OTEL_* lists use). */
export function parseKeyValues(text: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const pair of text.split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    if (!key) throw new ConfigError(`${name}: "${pair.trim()}" is not key=value`);
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name}: the value of ${key} is not percent-encoded correctly`);
    }
  }
  return out;
}

/**
 * The component's tracing, or undefined when its OTEL_* variables leave it off (then the SDK is not
 * loaded at all). Spans are batched and sent over OTLP/HTTP in the background; export failures are
 * the SDK's to log and never reach a request.
 */
export function startTracing(defaultServiceName: string, env: Env): Tracing | undefined {
  const settings = tracingSettings(defaultServiceName, env);
  if (!settings) return undefined;
  // Required here, not imported above: with tracing off the SDK and its exporters never load.
  const sdk = require('./tracing-sdk') as {
    tracingProvider(s: TracingSettings): ConstructorParameters<typeof Tracing>[1] & { getTracer(name: string): Tracer };
  };
  const provider = sdk.tracingProvider(settings);
  return new Tracing(provider.getTracer('licensing'), provider);
}
