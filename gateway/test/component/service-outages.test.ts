import type { Product } from '@licensing/proto';
import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import {
  accountHandlers,
  fakeLicence,
  fakeProduct,
  fakeVendor,
  licenseHandlers,
  productHandlers,
} from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// /readyz means "this process can serve" (docs/operations.md): with the account service down, the
// gateway stays in the load balancer and answers the validations it holds in memory; /api/v1/status
// is where the outage shows. A service that restarts is waited for; one that stays away is a 503.

const vendor = fakeVendor();
const ready = fakeProduct(vendor, 'Ready');
const products: Product[] = [ready];
const licence = fakeLicence(vendor, ready.id, 'r@example.com');
let h: GatewayWithFakeServices;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: {
      account: accountHandlers([vendor]),
      product: productHandlers(products),
      license: licenseHandlers([licence]),
    },
  });
  api = client(h.url, vendor.apiKey);
});

afterAll(async () => {
  await h?.stop();
});

it('stays ready with the account service down, answers a cached validation, and reports the outage', async () => {
  const validate = () => api('GET', `/api/v1/licenses/validate?license_key=${licence.key}`);
  expect((await validate()).body.code).toBe('valid'); // now held in the gateway's memory

  await h.stopService('account');
  try {
    await eventually(async () => {
      const readiness = await client(h.url)('GET', '/readyz');
      expect(readiness.status).toBe(200);
      expect(readiness.body).toMatchObject({ status: 'ready', account_service: { status: 'down' } });
    });
    const cached = await validate();
    expect(cached.status).toBe(200);
    expect(cached.body.code).toBe('valid');
    // Polled: the status's first probes open a channel to each service, and on a loaded machine one
    // can miss its 1 s deadline.
    await eventually(
      async () => {
        const status = await api('GET', '/api/v1/status');
        expect(status.status).toBe(200);
        expect(status.body.services.account.status).toBe('down');
        expect(status.body.services.product.status).toBe('ok');
        expect(status.body.status).toBe('degraded');
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
  } finally {
    await h.restartService('account');
  }
});

it('rides over a service restart: the first call after it waits for the reconnection instead of failing', async () => {
  expect((await api('POST', '/api/v1/products', { name: 'Before' })).status).toBe(201);
  // As a rolling update does: the replica goes, and a new one serves at the same address. The
  // gateway's channel is still waiting out its reconnect backoff when the next call comes.
  await h.stopService('product');
  await h.restartService('product');
  const after = await api('POST', '/api/v1/products', { name: 'After' });
  expect(after.status).toBe(201);
  expect((await api('GET', '/api/v1/products')).body.data.map((p: { name: string }) => p.name)).toEqual(
    expect.arrayContaining(['Before', 'After']),
  );
});

it('a service that stays away still answers 503, not a hang', async () => {
  await h.stopService('product');
  try {
    const res = await api('GET', '/api/v1/products');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
  } finally {
    await h.restartService('product');
  }
});
