import { readFileSync } from 'node:fs';
import { freePort } from '../../scripts/lib/net';
import { eventually } from '../support/eventually';
import { client, startStack, type Stack } from '../support/stack';

// GATEWAY_WORKERS: one gateway process per core on one host. A real primary
// process and its workers over the stack's services.
// Own stack: it runs a gateway with GATEWAY_WORKERS (a primary and its worker processes) and stops it under the
// test's eyes.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

/** The pids of a process's children (Linux). */
const childrenOf = (pid: number): number[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

/** The sum over every series of one metric whose labels match. */
async function total(metricsUrl: string, name: string, labels: RegExp): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && labels.test(l))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

it('GATEWAY_WORKERS=2: two processes share the port and answer every request, /metrics sums them, a dead worker is replaced, SIGTERM stops all', async () => {
  const { accountId, apiKey } = await stack.newAccount();
  // Limits far above what the test sends, retries included (the default is 100 a minute per key).
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000, per_hour_limit: 1_000_000 });
  const metricsPort = await freePort();
  const gw = await stack.gatewayProcess({ GATEWAY_WORKERS: '2', METRICS_PORT: String(metricsPort) });
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const workers = await eventually(() => {
    const pids = childrenOf(gw.pid);
    expect(pids).toHaveLength(2);
    return pids;
  });
  const api = client(gw.url, apiKey);
  const product = (await api('POST', '/api/v1/products', { name: 'Workers' })).body.id as string;
  const key = (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'w@example.com' })).body
    .license_key as string;
  const validations = () =>
    Promise.all(Array.from({ length: 40 }, () => api('GET', `/api/v1/licenses/validate?license_key=${key}`)));
  for (const res of await validations()) expect(res.body).toMatchObject({ valid: true, code: 'valid' });
  // The primary's /metrics is the sum of both workers' (a worker alone would show fewer).
  const validate = /route="\/api\/v1\/licenses\/validate".*status="200"/;
  await eventually(async () => expect(await total(metricsUrl, 'licensing_http_requests_total', validate)).toBe(40));
  // States are not summed: connected is the workers' least (1), not 2.
  await eventually(async () =>
    expect(await total(metricsUrl, 'licensing_nats_connected', /component="gateway"/)).toBe(1),
  );

  process.kill(workers[0], 'SIGKILL');
  const replaced = await eventually(() => {
    const pids = childrenOf(gw.pid);
    expect(pids).toHaveLength(2);
    expect(pids).not.toContain(workers[0]);
    return pids;
  });
  for (const res of await eventually(async () => {
    const answers = await validations();
    for (const res of answers) expect(res.status).toBe(200);
    return answers;
  }))
    expect(res.body.code).toBe('valid');

  expect(await gw.stop()).toBe(0);
  for (const pid of replaced) expect(() => process.kill(pid, 0)).toThrow();
}, 60_000);
