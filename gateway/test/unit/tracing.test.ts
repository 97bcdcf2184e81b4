import { Writable } from 'node:stream';
import type { DomainEvent } from '@licensing/proto';
import {
  ConfigError,
  consumeTraced,
  createLogger,
  currentRequestId,
  currentTrace,
  SpanKind,
  Tracing,
  parseKeyValues,
  remoteContext,
  setLogDestination,
  startTracing,
  traceIdsOf,
  traceparentOf,
  tracingSettings,
  withCallScope,
} from '@licensing/runtime';
import { accessLine } from '@licensing/runtime';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const PARENT = `00-${TRACE}-${SPAN}-01`;

describe('the OTEL_* settings', () => {
  it('leave tracing off without an endpoint, when disabled, or with the none exporter (and then no SDK starts)', () => {
    expect(tracingSettings('gateway', {})).toBeUndefined();
    expect(tracingSettings('gateway', { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingSettings('gateway', { ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingSettings('gateway', { ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(startTracing('gateway', {})).toBeUndefined();
  });

  it('follow the specification: the base endpoint gets /v1/traces, the traces endpoint is taken as it is', () => {
    const base = tracingSettings('license-service', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })!;
    expect(base).toMatchObject({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      sampler: 'parentbased_always_on',
      ratio: 1,
      resource: { 'service.name': 'license-service' },
      timeoutMs: 10_000,
      batch: { scheduledDelayMillis: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMillis: 30_000 },
    });
    const own = tracingSettings('gateway', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/in',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-tenant=t1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=t2',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.namespace=licensing',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    })!;
    expect(own).toMatchObject({
      url: 'https://traces.example.com/in',
      protocol: 'http/json',
      headers: { authorization: 'Bearer abc', 'x-tenant': 't2' },
      timeoutMs: 2500,
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
      resource: { 'deployment.environment': 'prod', 'service.namespace': 'licensing', 'service.name': 'gateway' },
      batch: { scheduledDelayMillis: 200 },
    });
  });

  it('let OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES, name the component', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    const named = (env: Record<string, string>) => tracingSettings('gateway', { ...endpoint, ...env })!.resource;
    expect(named({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=edge' })['service.name']).toBe('edge');
    expect(named({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=edge', OTEL_SERVICE_NAME: 'api' })['service.name']).toBe(
      'api',
    );
  });

  it('refuse what cannot be honoured, saying which variable and what to use', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    const refusal = (env: Record<string, string>) => {
      try {
        tracingSettings('gateway', { ...endpoint, ...env });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/grpc is not supported: use http\/protobuf/);
    expect(refusal({ OTEL_TRACES_EXPORTER: 'zipkin' })).toMatch(/OTEL_TRACES_EXPORTER=zipkin/);
    expect(refusal({ OTEL_TRACES_SAMPLER: 'sometimes' })).toMatch(/OTEL_TRACES_SAMPLER=sometimes/);
    expect(refusal({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toMatch(/from 0 to 1/);
    expect(refusal({ OTEL_BSP_SCHEDULE_DELAY: 'soon' })).toMatch(/OTEL_BSP_SCHEDULE_DELAY must be a whole number/);
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(/must be an http\(s\) URL/);
    expect(refusal({ OTEL_RESOURCE_ATTRIBUTES: 'novalue' })).toMatch(/OTEL_RESOURCE_ATTRIBUTES: "novalue"/);
    expect(refusal({ OTEL_EXPORTER_OTLP_HEADERS: 'a=%E0%A4%A' })).toMatch(/percent-encoded/);
  });

  it('parse key=value lists with percent-encoded values and empty items', () => {
    expect(parseKeyValues(' a = 1 ,, b=x%2Cy ', 'X')).toEqual({ a: '1', b: 'x,y' });
    expect(parseKeyValues(undefined, 'X')).toEqual({});
  });
});

describe('the W3C trace context', () => {
  it('is read from a traceparent and written back unchanged; a malformed one is no context', () => {
    const ctx = remoteContext(PARENT);
    expect(traceparentOf(ctx)).toBe(PARENT);
    expect(traceIdsOf(ctx)).toEqual({ trace_id: TRACE, span_id: SPAN });
    for (const bad of [undefined, '', 'x', `00-${'0'.repeat(32)}-${SPAN}-01`, `00-${TRACE}-${SPAN}`, 42])
      expect(remoteContext(bad)).toBeUndefined();
    expect(traceparentOf(undefined)).toBeUndefined();
  });

  it('puts trace_id and span_id on the log lines of a traced call, and nothing on an untraced one', () => {
    const lines: Record<string, unknown>[] = [];
    setLogDestination(
      new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(chunk.toString()));
          done();
        },
      }),
    );
    try {
      const log = createLogger('test', 'info');
      withCallScope('req_1', Infinity, () => log.info('traced'), remoteContext(PARENT));
      withCallScope('req_2', Infinity, () => log.info('untraced'));
      log.info('outside');
    } finally {
      setLogDestination(undefined);
    }
    expect(lines.map(({ msg, request_id, trace_id, span_id }) => ({ msg, request_id, trace_id, span_id }))).toEqual([
      { msg: 'traced', request_id: 'req_1', trace_id: TRACE, span_id: SPAN },
      { msg: 'untraced', request_id: 'req_2', trace_id: undefined, span_id: undefined },
      { msg: 'outside', request_id: undefined, trace_id: undefined, span_id: undefined },
    ]);
  });

  it("is on the access log's line when the request is traced", () => {
    const entry = { requestId: 'r', method: 'GET', url: '/healthz', status: 200, startedNs: 0n };
    expect(JSON.parse(accessLine({ ...entry, traceId: TRACE }, 'gateway', 'T', 0n)).trace_id).toBe(TRACE);
    expect(JSON.parse(accessLine(entry, 'gateway', 'T', 0n))).not.toHaveProperty('trace_id');
  });
});

describe('a consumed event', () => {
  const inMemory = () => {
    const { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } = require('@opentelemetry/sdk-trace');
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    return { tracing: new Tracing(provider.getTracer('test'), provider), exporter };
  };
  const event = (traceparent?: string) =>
    ({
      id: 'evt_1',
      type: 'checkout.completed',
      account_id: 'acct_1',
      created_at: '',
      request_id: 'req_9',
      ...(traceparent ? { traceparent } : {}),
      data: {},
    }) as unknown as DomainEvent;

  it('is handled in a consumer span of its trace, its calls and lines in that trace and request', async () => {
    const { tracing, exporter } = inMemory();
    const seen = await consumeTraced(tracing, { subject: 's.checkout.completed' }, event(PARENT), async () => ({
      trace: traceIdsOf(currentTrace())?.trace_id,
      request: currentRequestId(),
    }));
    expect(seen).toEqual({ trace: TRACE, request: 'req_9' });
    await tracing.flush();
    const [span] = exporter.getFinishedSpans();
    expect([span.name, span.kind, span.parentSpanContext?.spanId, span.status.code]).toEqual([
      'checkout.completed process',
      SpanKind.CONSUMER,
      SPAN,
      0,
    ]);
  });

  it('marks the span failed when handling fails, and is just run when untraced or tracing is off', async () => {
    const { tracing, exporter } = inMemory();
    await expect(
      consumeTraced(tracing, { subject: 's' }, event(PARENT), async () => {
        throw new Error('store away');
      }),
    ).rejects.toThrow('store away');
    await tracing.flush();
    expect(exporter.getFinishedSpans().map((s: { status: { code: number } }) => s.status.code)).toEqual([2]);
    expect(await consumeTraced(tracing, { subject: 's' }, event(), async () => currentTrace())).toBeUndefined();
    expect(await consumeTraced(undefined, { subject: 's' }, event(PARENT), async () => currentTrace())).toBeUndefined();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });
});
