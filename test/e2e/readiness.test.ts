import { client, startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';

// /readyz means "this process can serve" (docs/operations.md): with the account service down, the
// gateway stays in the load balancer and answers the validations it holds in memory; /api/v1/status
// is where the outage shows.

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

it('stays ready with the account service down, answers a cached validation, and reports the outage', async () => {
  const acct = await stack.newAccount();
  const api = client(stack.url, acct.apiKey);
  const product = (await api('POST', '/api/v1/products', { name: 'Ready' })).body.id;
  const key = (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'r@example.com' })).body
    .license_key as string;
  const validate = () => api('GET', `/api/v1/licenses/validate?license_key=${key}`);
  expect((await validate()).body.code).toBe('valid'); // now held in the gateway's memory

  await stack.stopService('account');
  try {
    await eventually(async () => {
      const ready = await client(stack.url)('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ready', account_service: { status: 'down' } });
    });
    const cached = await validate();
    expect(cached.status).toBe(200);
    expect(cached.body.code).toBe('valid');
    // Polled: the status's first probes open a channel to each service, and on a loaded machine one
    // can miss its 1 s deadline (a fresh-clone run once saw every probe miss it, so "down").
    await eventually(
      async () => {
        const status = await api('GET', '/api/v1/status');
        expect(status.status).toBe(200);
        expect(status.body.services.account.status).toBe('down');
        expect(status.body.status).toBe('degraded');
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
  } finally {
    await stack.restartService('account');
  }
});

it('rides over a service restart: the first call after it waits for the reconnection instead of failing', async () => {
  const acct = await stack.newAccount();
  const api = client(stack.url, acct.apiKey);
  expect((await api('POST', '/api/v1/products', { name: 'Before' })).status).toBe(201);
  // As a rolling update does: the replica goes, and a new one serves at the same address. The
  // gateway's channel is still waiting out its reconnect backoff when the next call comes.
  await stack.stopService('product');
  await stack.restartService('product');
  const after = await api('POST', '/api/v1/products', { name: 'After' });
  expect(after.status).toBe(201);
  expect((await api('GET', '/api/v1/products')).body.data.map((p: { name: string }) => p.name)).toEqual(
    expect.arrayContaining(['Before', 'After']),
  );
});

it('a service that stays away still answers 503, not a hang', async () => {
  const acct = await stack.newAccount();
  const api = client(stack.url, acct.apiKey);
  await stack.stopService('product');
  try {
    const res = await api('GET', '/api/v1/products');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
  } finally {
    await stack.restartService('product');
  }
});
