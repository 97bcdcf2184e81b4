import type { Connection } from 'mongoose';
import { connectMongo } from '@licensing/runtime';
import { EXPORT_WRITER_STOPPED } from '../../services/license/src/transfer/domain/job-leases';
import { EXPORT_GATEWAY_SHUT_DOWN } from '../../gateway/src/routes/export-jobs';
import { eventually } from '../support/eventually';
import { client, startStack, type Stack } from '../support/stack';

// Own stack: its checkout service is held behind a proxy and exports run on a lease of a few seconds
// (EXPORT_LEASE_MS).

// An export runs in the gateway process that took its POST. When that process dies mid-way
// (a crash, a SIGKILL, a deploy), the export must still end: its lease in the licence service lapses
// and any gateway then reads it failed, saying to start a new export. A graceful stop (SIGTERM) ends
// the exports it could not finish in time at once. The checkout service sits behind a holding proxy:
// held, it keeps an export on its checkout-session page for as long as the test needs.

jest.setTimeout(120_000);

const LEASE_MS = 2000;
let s: Stack;
/** The licence service's store, to see an export's lease (`lease_until`) move. */
let licenseDb: Connection;

beforeAll(async () => {
  s = await startStack({ exportLeaseMs: LEASE_MS }, {}, undefined, { holdable: ['checkout'] });
  licenseDb = await connectMongo(s.topology.mongoUrl, `${s.topology.dbPrefix}_license`);
});

afterAll(async () => {
  s?.held.checkout?.release();
  await licenseDb?.close();
  await s?.stop();
});

afterEach(() => s.held.checkout?.release());

async function accountWithData() {
  const { apiKey } = await s.newAccount();
  const api = client(s.url, apiKey);
  const product = await api('POST', '/api/v1/products', { name: 'Moved' });
  expect(product.status).toBe(201);
  expect(
    (await api('POST', '/api/v1/licenses', { product_id: product.body.id, customer_email: 'ada@example.com' })).status,
  ).toBe(201);
  return { api, apiKey };
}

it('an export whose gateway is killed mid-way ends failed, read through another gateway', async () => {
  const { api, apiKey } = await accountWithData();
  // A deadline longer than the test: the held page never times out on its own.
  const doomed = await s.gatewayProcess({ GRPC_TIMEOUT_MS: '120000' });
  s.held.checkout!.hold();
  const started = await client(doomed.url, apiKey)('POST', '/api/v1/exports');
  expect(started.status).toBe(202);
  const id = started.body.id as string;

  // Held on a page, the job writes nothing, but its heartbeat keeps the export running well past its
  // lease: polled until the stored lease reaches beyond twice the first one (only heartbeats move it),
  // the export reading running all along.
  await eventually(
    async () => {
      const r = await api('GET', `/api/v1/exports/${id}`);
      expect(r.body).toMatchObject({ status: 'running', failure: null });
      const doc = await licenseDb.collection('exports').findOne({ _id: id as never });
      expect(doc!.lease_until.getTime() - doc!.created_at.getTime()).toBeGreaterThan(2 * LEASE_MS);
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );

  process.kill(doomed.pid, 'SIGKILL');
  await doomed.exited.catch(() => undefined);
  const failed = await eventually(
    async () => {
      const r = await api('GET', `/api/v1/exports/${id}`);
      expect(r.status).toBe(200);
      expect(r.body.status).toBe('failed');
      return r.body;
    },
    { timeoutMs: 10 * LEASE_MS, intervalMs: 100 },
  );
  expect(failed).toMatchObject({ failure: EXPORT_WRITER_STOPPED, download_url: null });
  expect(failed.failure).toMatch(/process running this export stopped.*start a new export/);
  expect(failed.finished_at).toEqual(expect.any(String));
  // It stays failed (stored so), and its file cannot be downloaded.
  expect((await api('GET', `/api/v1/exports/${id}`)).body).toMatchObject({ status: 'failed' });
  expect((await api('GET', `/api/v1/exports/${id}/download`)).status).toBe(409);

  // A new export, once the checkout service answers again, runs to its end.
  s.held.checkout!.release();
  const again = await api('POST', '/api/v1/exports');
  expect(again.status).toBe(202);
  await eventually(
    async () => expect((await api('GET', `/api/v1/exports/${again.body.id}`)).body.status).toBe('done'),
    { timeoutMs: 30_000, intervalMs: 100 },
  );
});

it('a gateway stopped gracefully fails the exports it could not finish at once (no wait for the lease)', async () => {
  const { api, apiKey } = await accountWithData();
  const leaving = await s.gatewayProcess({ GRPC_TIMEOUT_MS: '120000', SHUTDOWN_TIMEOUT_MS: '300' });
  s.held.checkout!.hold();
  const started = await client(leaving.url, apiKey)('POST', '/api/v1/exports');
  expect(started.status).toBe(202);
  expect(await leaving.stop()).toBe(0);
  // Marked failed before the process exited: the first read says so.
  const r = await api('GET', `/api/v1/exports/${started.body.id}`);
  expect(r.body).toMatchObject({ status: 'failed', failure: EXPORT_GATEWAY_SHUT_DOWN, download_url: null });
});
