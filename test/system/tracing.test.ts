import { randomBytes } from 'node:crypto';
import { client, startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { WebhookReceiver } from '../support/webhook-receiver';

// OpenTelemetry across every hop, exported over OTLP/HTTP to a real receiver in this test: the
// trace of a validation (gateway → licence service over gRPC) and of an issuance (gateway →
// licence service → NATS → webhook fan-out → the vendor's endpoint, which gets the traceparent).
// Own stack: every component exports traces to this file's OTLP receiver.

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

let stack: Stack;
let otlp: OtlpReceiver;
let hooks: WebhookReceiver;
let apiKey: string;
let api: ReturnType<typeof client>;
let productId: string;

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
  hooks = await WebhookReceiver.start();
  stack = await startStack({ otel: otlp.env() });
  ({ apiKey } = await stack.newAccount());
  api = client(stack.url, apiKey);
  productId = (await api('POST', '/api/v1/products', { name: 'Traced' })).body.id;
});

afterAll(async () => {
  await stack?.stop();
  await hooks?.stop();
  await otlp?.stop();
});

const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
const one = (spans: ReceivedSpan[], service: string, name: string, kind: number) => {
  const found = spans.filter((s) => s.service === service && s.name === name && s.kind === kind);
  expect(found.map((s) => `${s.service} ${s.name}`)).toEqual([`${service} ${name}`]);
  return found[0];
};
const validate = (key: string, headers: Record<string, string>) =>
  fetch(`${stack.url}/api/v1/licenses/validate?license_key=${key}`, {
    headers: { authorization: `Bearer ${apiKey}`, ...headers },
  });

it("continues the caller's trace through the gateway and the licence service for a validation", async () => {
  const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'v@example.com' })).body
    .license_key as string;
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  const first = await validate(key, { traceparent: traceparent(traceId, callerSpan) });
  expect(first.status).toBe(200);
  expect((await first.json()).code).toBe('valid');

  const spans = await eventually(
    () => {
      // Each component exports its spans on its own schedule: wait for these three (a first look-up of
      // the product, licence service to product service, may be in the trace too).
      const trace = otlp.trace(traceId);
      expect(trace.map((s) => `${s.service} ${s.kind}`)).toEqual(
        expect.arrayContaining(['gateway 2', 'gateway 3', 'license-service 2']),
      );
      return trace;
    },
    { timeoutMs: 10_000 },
  );
  const route = one(spans, 'gateway', 'GET /api/v1/licenses/validate', SERVER);
  expect(route.parentSpanId).toBe(callerSpan);
  expect(route.attributes).toMatchObject({
    'http.route': '/api/v1/licenses/validate',
    'http.response.status_code': 200,
  });
  // The URL (with the licence key in its query) is in no span.
  expect(JSON.stringify(spans)).not.toContain(key);
  const call = one(spans, 'gateway', 'licensing.v1.LicenseService/ValidateLicense', CLIENT);
  expect(call.parentSpanId).toBe(route.spanId);
  const served = one(spans, 'license-service', 'licensing.v1.LicenseService/ValidateLicense', SERVER);
  expect(served.parentSpanId).toBe(call.spanId);

  // Answered from the gateway's memory next time: a trace of the gateway alone.
  const cachedTrace = randomBytes(16).toString('hex');
  expect((await validate(key, { traceparent: traceparent(cachedTrace, callerSpan) })).status).toBe(200);
  const cached = await eventually(() => {
    const trace = otlp.trace(cachedTrace);
    expect(trace).toHaveLength(1);
    return trace;
  });
  expect(cached[0]).toMatchObject({
    service: 'gateway',
    name: 'GET /api/v1/licenses/validate',
    parentSpanId: callerSpan,
  });
});

it('starts a trace at the gateway for an issuance and carries it through NATS to the webhook request', async () => {
  await api('POST', '/api/v1/webhooks', { url: `${hooks.url}/traced`, events: ['license.created'] });
  const issued = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'w@example.com' });
  expect(issued.status).toBe(201);
  const [delivery] = await hooks.waitFor('/traced', 1);
  // The vendor can continue the trace: the W3C header of the delivery's own span.
  const sent = String(delivery.headers.traceparent);
  expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  const [, traceId, deliverySpan] = sent.split('-');

  const spans = await eventually(
    () => {
      const trace = otlp.trace(traceId);
      expect(trace.filter((s) => s.service === 'webhook-service' && s.kind === CLIENT)).toHaveLength(1);
      // Each component exports on its own schedule: wait for every hop's span.
      expect(trace.map((s) => `${s.service} ${s.kind}`)).toEqual(
        expect.arrayContaining([
          'gateway 2',
          'gateway 3',
          'license-service 2',
          'license-service 4',
          'webhook-service 5',
        ]),
      );
      return trace;
    },
    { timeoutMs: 10_000 },
  );
  const route = one(spans, 'gateway', 'POST /api/v1/licenses', SERVER);
  expect(route.parentSpanId).toBe('');
  const issue = spans.find((s) => s.service === 'license-service' && s.kind === SERVER);
  expect(issue).toBeDefined();
  const viaGateway = spans.find((s) => s.spanId === issue!.parentSpanId)!;
  expect([viaGateway.service, viaGateway.kind, viaGateway.parentSpanId]).toEqual(['gateway', CLIENT, route.spanId]);
  // The outbox may publish an event twice (at once, and again by its relay; JetStream drops the copy): a
  // producer span each, both children of the issuance, and the fan-out continues one of them.
  const published = spans.filter((s) => s.name === 'license.created publish' && s.kind === PRODUCER);
  expect(published.length).toBeGreaterThanOrEqual(1);
  for (const p of published) expect([p.service, p.parentSpanId]).toEqual(['license-service', issue!.spanId]);
  const fannedOut = one(spans, 'webhook-service', 'license.created process', CONSUMER);
  expect(published.map((p) => p.spanId)).toContain(fannedOut.parentSpanId);
  const post = one(spans, 'webhook-service', 'POST', CLIENT);
  expect(post.parentSpanId).toBe(fannedOut.spanId);
  expect(post.spanId).toBe(deliverySpan);
  expect(post.attributes).toMatchObject({ 'http.response.status_code': 200, 'server.address': '127.0.0.1' });
  expect(otlp.refused).toEqual([]);
});
