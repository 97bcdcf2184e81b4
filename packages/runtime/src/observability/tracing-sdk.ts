import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { SamplerName, TracingSettings } from './tracing';

// The OpenTelemetry SDK, loaded only when tracing is on (tracing.ts imports this file lazily).

function samplerOf(name: SamplerName, ratio: number): Sampler {
  const root = name.endsWith('always_off')
    ? new AlwaysOffSampler()
    : name.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(ratio)
      : new AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** A tracer provider of its own (never the global one): tests run several components in one process. */
export function tracingProvider(settings: TracingSettings): TracerProvider {
  const exporterOptions = { url: settings.url, headers: settings.headers, timeoutMillis: settings.timeoutMs };
  const exporter =
    settings.protocol === 'http/json' ? new JsonExporter(exporterOptions) : new ProtobufExporter(exporterOptions);
  return new TracerProvider({
    resource: resourceFromAttributes(settings.resource),
    sampler: samplerOf(settings.sampler, settings.ratio),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...settings.batch })],
  });
}
