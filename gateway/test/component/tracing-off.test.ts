import type { License, Product } from '@licensing/proto';
import { client } from '../../../test/support/stack';
import { OtlpReceiver } from '../../../test/support/otlp-receiver';
import { ModuleRecorder, otelOf, sdkPackagesOf } from '../../../test/support/process-modules';
import {
  accountHandlers,
  fakeLicence,
  fakeProduct,
  fakeVendor,
  licenseHandlers,
  productHandlers,
} from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// Tracing off costs nothing (docs/operations.md, "Tracing"): with no OTLP endpoint set, the gateway's
// process never loads the OpenTelemetry SDK or an exporter, not at start and not while it answers the
// hot path. The gateway runs as its own process (its dist entry, as deployments run it: build first,
// as `npm test` does) over services faked in this process; the same process with an endpoint set loads
// the SDK and sends its spans. A service's process: services/license/test/component/tracing-off.test.ts.

const vendor = fakeVendor();
const products: Product[] = [fakeProduct(vendor, 'Untraced')];
const licences: License[] = [fakeLicence(vendor, products[0].id, 'ada@example.com')];
const key = licences[0].key;
const recorder = new ModuleRecorder();
let h: GatewayWithFakeServices;
let otlp: OtlpReceiver;

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
  h = await startGatewayWithFakeServices({
    startGateway: false,
    handlers: {
      account: accountHandlers([vendor]),
      product: productHandlers(products),
      license: licenseHandlers(licences),
    },
  });
});

afterAll(async () => {
  recorder.close();
  await h?.stop();
  await otlp?.stop();
});

/** A gateway process answers validations (the hot path) and stops on SIGTERM: the modules it loaded. */
async function gatewayRun(on: boolean): Promise<string[]> {
  const gw = await recorder.start('gateway', (port) => ({
    ...h.env({ METRICS_PORT: '0', ...otelOf(on && otlp.env()) }),
    PORT: String(port),
  }));
  const own = client(`http://127.0.0.1:${gw.port}`, vendor.apiKey);
  for (let i = 0; i < 5; i++) {
    const res = await own('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`);
    expect([res.status, res.body.code]).toEqual([200, 'valid']);
  }
  const { code, modules } = await gw.stop();
  expect(code).toBe(0);
  return modules;
}

it('off (no endpoint): the gateway process never loads the SDK or an exporter, at start or on the hot path', async () => {
  const modules = await gatewayRun(false);
  // What it loaded is recorded (its entry and our tracing module are there): the SDK is not.
  expect(modules.some((m) => m.endsWith('/gateway/dist/main.js'))).toBe(true);
  expect(modules.some((m) => m.endsWith('/packages/runtime/dist/observability/tracing.js'))).toBe(true);
  expect(modules.filter((m) => m.includes('/observability/tracing-sdk.js'))).toEqual([]);
  expect(sdkPackagesOf(modules)).toEqual([]);
});

it('on (an endpoint set): the same processes load the SDK and its exporter, and send their spans', async () => {
  const gateway = await gatewayRun(true);
  expect(sdkPackagesOf(gateway)).toEqual(expect.arrayContaining(['sdk-trace', 'exporter-trace-otlp-http']));
  // Its spans were sent by the time it exited (nothing else here is traced).
  expect([...new Set(otlp.spans.map((s) => s.service))]).toEqual(['gateway']);
});
