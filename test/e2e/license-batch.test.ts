import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { client, startStack, type Stack } from '../support/stack';

// POST /api/v1/licenses/batch through the running system: a job issues every item once, its GET shows
// the keys, each licence publishes license.created and the batch one license.batch_completed; a bad
// batch is refused whole, with nothing issued.

let stack: Stack;
let events: EventLog;
let api: ReturnType<typeof client>;
let product: string;

beforeAll(async () => {
  stack = await startStack();
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  api = client(stack.url, (await stack.newAccount()).apiKey);
  product = (await api('POST', '/api/v1/products', { name: 'Bulk', policy: { entitlements: ['base'] } })).body.id;
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
});

const licencesOf = async (productId: string) => {
  const out: any[] = [];
  for (let after = ''; ; ) {
    const page = (
      await api('GET', `/api/v1/licenses?product_id=${productId}&limit=100${after ? `&starting_after=${after}` : ''}`)
    ).body;
    out.push(...page.data);
    if (!page.has_more) return out;
    after = page.next_cursor;
  }
};

const done = (id: string, timeoutMs = 20_000) =>
  eventually(
    async () => {
      const res = await api('GET', `/api/v1/licenses/batch/${id}`);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('done');
      return res.body;
    },
    { timeoutMs, intervalMs: 100 },
  );

it('issues every item once, shows the keys, and publishes each license.created and one license.batch_completed', async () => {
  const body = {
    product_id: product,
    licenses: [
      { customer_email: 'a@example.com', metadata: { order: '1' }, send_email: true },
      { customer_email: 'b@example.com', entitlements: ['pro'] },
      { customer_email: 'c@example.com', send_email: true },
    ],
  };
  const headers = { 'idempotency-key': `bulk-${Date.now()}` };
  const res = await api('POST', '/api/v1/licenses/batch', body, headers);
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ object: 'license_batch', status: 'running', total: 3, product_id: product });
  expect(res.headers.get('location')).toBe(`/api/v1/licenses/batch/${res.body.id}`);
  const job = await done(res.body.id);
  expect(job).toMatchObject({ total: 3, issued: 3, failed: 0, waiting: 0 });
  expect(job.results.map((r: any) => [r.index, r.status, r.error])).toEqual([
    [0, 'issued', null],
    [1, 'issued', null],
    [2, 'issued', null],
  ]);
  const keys = job.results.map((r: any) => r.license_key as string);
  const first = (await api('GET', `/api/v1/licenses/${keys[0]}`)).body;
  expect(first).toMatchObject({
    customer_email: 'a@example.com',
    metadata: { order: '1' },
    id: job.results[0].license_id,
  });
  expect((await api('GET', `/api/v1/licenses/${keys[1]}`)).body.entitlements).toEqual(['base', 'pro']);
  for (const key of keys)
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body).toMatchObject({ valid: true });

  const summary = await events.waitFor(
    (e) => e.type === 'license.batch_completed' && (e.data as any).batch.id === job.id,
  );
  expect((summary.data as any).batch).toMatchObject({ total: 3, issued: 3, failed: 0, product_id: product });
  await eventually(() =>
    expect(
      events.all().filter((e) => e.type === 'license.created' && keys.includes((e.data as any).license.key)),
    ).toHaveLength(3),
  );

  // The send_email items get the licence mail (queued by the notification service on the summary), once.
  const mails = async () =>
    ((await api('GET', '/api/v1/emails?limit=100')).body.data as any[]).filter((e) => keys.includes(e.license_key));
  await eventually(async () => {
    const queued = await mails();
    expect(queued.map((m) => [m.to, m.license_key]).sort()).toEqual([
      ['a@example.com', keys[0]],
      ['c@example.com', keys[2]],
    ]);
  });

  // The same request under the same key is the same job: nothing issued twice.
  const again = await api('POST', '/api/v1/licenses/batch', body, headers);
  expect(again.status).toBe(202);
  expect(again.body.id).toBe(job.id);
  expect(again.body.status).toBe('done');
  expect(await licencesOf(product)).toHaveLength(3);
  // The same key with another body: 422.
  const other = await api('POST', '/api/v1/licenses/batch', { ...body, licenses: body.licenses.slice(1) }, headers);
  expect(other.status).toBe(422);
  expect(
    events.all().filter((e) => e.type === 'license.batch_completed' && (e.data as any).batch.id === job.id),
  ).toHaveLength(1);
});

it('issues 1,000 licences in one batch', async () => {
  const bulk = (await api('POST', '/api/v1/products', { name: 'Thousand' })).body.id as string;
  const licenses = Array.from({ length: 1000 }, (_, i) => ({ customer_email: `user${i}@example.com` }));
  // On a loaded machine storing the batch can outlast the call's deadline (503, Retry-After): a client
  // retries under the same Idempotency-Key, and gets the one job.
  const headers = { 'idempotency-key': `thousand-${Date.now()}` };
  const res = await eventually(
    async () => {
      const r = await api('POST', '/api/v1/licenses/batch', { product_id: bulk, licenses }, headers);
      expect(r.status).toBe(202);
      return r;
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
  const job = await done(res.body.id, 60_000);
  expect(job).toMatchObject({ total: 1000, issued: 1000, failed: 0 });
  expect(new Set(job.results.map((r: any) => r.license_key)).size).toBe(1000);
  expect(await licencesOf(bulk)).toHaveLength(1000);
}, 90_000);

it('refuses a batch of 1,001, an unknown product and a bad e-mail in an item (naming it), issuing nothing', async () => {
  const empty = (await api('POST', '/api/v1/products', { name: 'Nothing issued' })).body.id as string;
  const many = Array.from({ length: 1001 }, (_, i) => ({ customer_email: `u${i}@example.com` }));
  const tooMany = await api('POST', '/api/v1/licenses/batch', { product_id: empty, licenses: many });
  expect(tooMany.status).toBe(400);
  expect(tooMany.body.errors[0].field).toBe('licenses');

  const unknown = await api('POST', '/api/v1/licenses/batch', {
    product_id: 'prod_01J0000000000000000000000A',
    licenses: [{ customer_email: 'a@example.com' }],
  });
  expect(unknown.status).toBe(404);

  const badEmail = await api('POST', '/api/v1/licenses/batch', {
    product_id: empty,
    licenses: [
      { customer_email: 'ok@example.com' },
      { customer_email: 'ok2@example.com' },
      { customer_email: 'not-an-email' },
    ],
  });
  expect(badEmail.status).toBe(400);
  expect(badEmail.body.errors).toEqual([
    { field: 'licenses[2].customer_email', message: 'licenses[2].customer_email must be a valid e-mail address' },
  ]);
  const badShape = await api('POST', '/api/v1/licenses/batch', {
    product_id: empty,
    licenses: [{ customer_email: 'ok@example.com' }, { customer_email: 'x@example.com', colour: 'red' }],
  });
  expect(badShape.status).toBe(400);
  expect(badShape.body.errors[0].field).toBe('licenses[1].colour');
  const none = await api('POST', '/api/v1/licenses/batch', { product_id: empty, licenses: [] });
  expect(none.status).toBe(400);
  expect(await licencesOf(empty)).toHaveLength(0);

  expect((await api('GET', '/api/v1/licenses/batch/lbat_01J0000000000000000000000A')).status).toBe(404);
  expect((await api('GET', '/api/v1/licenses/batch/nope')).status).toBe(404);
  expect((await api('GET', '/api/v1/licenses/batch')).status).toBe(405);
});

it("another account's batch is not found", async () => {
  const res = await api('POST', '/api/v1/licenses/batch', {
    product_id: product,
    licenses: [{ customer_email: 'mine@example.com' }],
  });
  const stranger = client(stack.url, (await stack.newAccount()).apiKey);
  expect((await stranger('GET', `/api/v1/licenses/batch/${res.body.id}`)).status).toBe(404);
  await done(res.body.id);
});
