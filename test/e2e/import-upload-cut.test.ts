import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo } from '@licensing/runtime';
import { UPLOAD_IDLE_MS } from '../../services/license/src/transfer/use-cases/imports';
import { eventually } from '../support/eventually';
import { client, startStack, TestClock, type Stack } from '../support/stack';

// Own stack: its clock is moved by hand (TestClock) past the upload's idle limit.

// An import's file is streamed by the gateway that took the POST, a piece at a time, to the
// licence service. A broken connection is abandoned by that gateway at once (imports.test.ts); when the
// gateway itself dies mid-file (SIGKILL, a node lost), nobody is left to say so: the licence service's
// import job fails an upload that got no piece for UPLOAD_IDLE_MS (10 minutes, on a test clock here)
// and deletes its pieces, instead of showing it "running" for ever.

jest.setTimeout(120_000);

const clock = new TestClock();
let s: Stack;
let licenseDb: Connection;

beforeAll(async () => {
  s = await startStack({}, {}, clock);
  licenseDb = await connectMongo(s.topology.mongoUrl, `${s.topology.dbPrefix}_license`);
});

afterAll(async () => {
  await licenseDb?.close();
  await s?.stop();
});

it('an upload whose gateway is killed mid-file is failed once no piece came for 10 minutes, and its pieces are deleted', async () => {
  const { apiKey, accountId } = await s.newAccount();
  const api = client(s.url, apiKey);
  const doomed = await s.gatewayProcess();
  const url = new URL('/api/v1/imports?format=jsonl', doomed.url);
  const upload = request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-ndjson' },
  });
  upload.on('error', () => undefined); // the gateway dies under it
  // About 2 MiB of rows, and no end: a few pieces stored, the file never complete.
  const row = () =>
    `${JSON.stringify({ key: randomUUID(), product_name: 'Cut off', customer_email: `c-${randomUUID()}@example.com` })}\n`;
  for (let i = 0; i < 20; i++) upload.write(Array.from({ length: 1000 }, row).join(''));

  const imports = licenseDb.collection('imports');
  const stored = await eventually(
    async () => {
      const doc = await imports.findOne({ account_id: accountId, state: 'uploading', chunks: { $gte: 2 } });
      expect(doc).not.toBeNull();
      return doc!;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  process.kill(doomed.pid, 'SIGKILL');
  await doomed.exited.catch(() => undefined);
  upload.destroy();
  const id = String(stored._id);
  const chunks = licenseDb.collection('import_chunks');
  expect(await chunks.countDocuments({ owner_id: id })).toBeGreaterThan(0);

  // Until the idle time passes it is an upload under way (shown running), whichever gateway is asked.
  const before = await api('GET', `/api/v1/imports/${id}`);
  expect(before.status).toBe(200);
  expect(before.body).toMatchObject({ id, status: 'running' });

  clock.advance(UPLOAD_IDLE_MS + 61_000); // past the idle time, and past the sweep's minute
  // Failed first, then its pieces deleted: both polled (the second write may follow the first read).
  const failed = await eventually(
    async () => {
      const r = await api('GET', `/api/v1/imports/${id}`);
      expect(r.body.status).toBe('failed');
      expect(await chunks.countDocuments({ owner_id: id })).toBe(0);
      return r.body;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  expect(failed.failure).toMatch(/upload broke off before the whole file arrived/);
  expect(failed.imported).toBe(0);
  // Nothing was imported from it.
  expect((await api('GET', '/api/v1/licenses?limit=1')).body.data).toEqual([]);
});
