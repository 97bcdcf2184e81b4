import {
  CreateLicenseRequest,
  LicenseServiceClient,
  Product,
  ProductServiceService,
  ValidateLicenseRequest,
  WebhookServiceService,
} from '@licensing/proto';
import { randomBytes } from 'node:crypto';
import { credentials, Metadata } from '@grpc/grpc-js';
import { health } from '@licensing/proto';
import {
  INTERNAL_CALLER_KEY,
  INTERNAL_TOKEN_KEY,
  TRACEPARENT_KEY,
  AppError,
  connectMongo,
  createClient,
  newId,
} from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { testTopology } from '../../../../test/support/stack';
import { eventually } from '../../../../test/support/eventually';
import { OtlpReceiver } from '../../../../test/support/otlp-receiver';
import { ModuleRecorder, otelOf, sdkPackagesOf } from '../../../../test/support/process-modules';

// Tracing off costs nothing (docs/operations.md, "Tracing"): with no OTLP endpoint set, a service's
// process never loads the OpenTelemetry SDK or an exporter, not at start and not while it answers. The
// licence service runs as its own process (its dist entry, as deployments run it: build first, as
// `npm test` does) over real FerretDB and NATS, its product and webhook services faked in this process;
// the same process with an endpoint set loads the SDK and sends its spans. The gateway's process:
// gateway/test/component/tracing-off.test.ts.

const t = testTopology();
const accountId = newId('acct');
const product = Product.fromPartial({
  id: newId('prod'),
  account_id: accountId,
  name: 'Untraced',
  created_at: new Date().toISOString(),
});
const recorder = new ModuleRecorder();
let products: FakePeer<typeof ProductServiceService>;
let webhooks: FakePeer<typeof WebhookServiceService>;
let otlp: OtlpReceiver;

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
  products = await startFakePeer(ProductServiceService, {
    getProduct: ({ account_id, id }) => {
      if (id !== product.id || account_id !== accountId) throw AppError.notFound('product');
      return product;
    },
  });
  webhooks = await startFakePeer(WebhookServiceService, {});
  await setUpEvents(t);
});

afterAll(async () => {
  recorder.close();
  const db = await connectMongo(t.mongoUrl, `${t.dbPrefix}_license`);
  await db.dropDatabase().catch(() => undefined);
  await db.close();
  await products?.stop();
  await webhooks?.stop();
  await otlp?.stop();
});

/** A service binds its port before its store and NATS answer (NOT_SERVING until then): waits for SERVING. */
async function servingAt(port: number): Promise<void> {
  const probe = new health.HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    await eventually(
      async () => {
        const status = await new Promise<health.HealthCheckResponse_ServingStatus>((resolve, reject) =>
          probe.check({ service: '' }, (err, res) => (err ? reject(err) : resolve(res!.status))),
        );
        expect(status).toBe(health.HealthCheckResponse_ServingStatus.SERVING);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  } finally {
    probe.close();
  }
}

/**
 * A call as a traced gateway sends it: the internal credential and a `traceparent` (a sampled trace of
 * the caller's), so the service's server span continues the caller's trace when its tracing is on.
 */
function traced<M extends 'createLicense' | 'validateLicense'>(
  api: ReturnType<typeof createClient<LicenseServiceClient>>,
  method: M,
  req: Parameters<LicenseServiceClient[M]>[0],
): Promise<Awaited<ReturnType<ReturnType<typeof createClient<LicenseServiceClient>>['call'][M]>>> {
  const md = new Metadata();
  const { caller, token } = credentialOf(t, 'gateway');
  md.set(INTERNAL_CALLER_KEY, caller);
  md.set(INTERNAL_TOKEN_KEY, token);
  md.set(TRACEPARENT_KEY, `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`);
  return new Promise((resolve, reject) =>
    (
      api.client[method] as unknown as (r: unknown, m: Metadata, cb: (err: Error | null, res: never) => void) => void
    ).call(api.client, req, md, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

/** A licence service process issues a licence and validates it (its own work: no cache answers either), then stops on SIGTERM. */
async function serviceRun(on: boolean): Promise<string[]> {
  const service = await recorder.start('license', (port) => ({
    ...envFor('license', t, { port, addrs: { product: products.address, webhook: webhooks.address } }),
    ...otelOf(on && otlp.env()),
  }));
  await servingAt(service.port);
  const api = createClient(LicenseServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
  try {
    const issued = await traced(
      api,
      'createLicense',
      CreateLicenseRequest.fromPartial({
        account_id: accountId,
        product_id: product.id,
        customer_email: 'bo@example.com',
      }),
    );
    const res = await traced(
      api,
      'validateLicense',
      ValidateLicenseRequest.fromPartial({ account_id: accountId, key: issued.key, key_scope: 'full' }),
    );
    expect([res.valid, res.code]).toEqual([true, 'valid']);
  } finally {
    api.close();
  }
  const { code, modules } = await service.stop();
  expect(code).toBe(0);
  return modules;
}

it('off: a service process (the licence service) never loads it either', async () => {
  const modules = await serviceRun(false);
  expect(modules.some((m) => m.endsWith('/services/license/dist/main.js'))).toBe(true);
  expect(sdkPackagesOf(modules)).toEqual([]);
});

it('on (an endpoint set): the same processes load the SDK and its exporter, and send their spans', async () => {
  const service = await serviceRun(true);
  expect(sdkPackagesOf(service)).toEqual(expect.arrayContaining(['sdk-trace', 'exporter-trace-otlp-http']));
  await eventually(() => expect([...new Set(otlp.spans.map((s) => s.service))]).toContain('license-service'));
});
