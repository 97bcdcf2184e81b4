import { EventLog } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { verifySignature } from '../../../../test/support/webhook-receiver';
import { send } from '../../src/jobs/sender';
import { eventOf, newAccount, startWebhook, type RunningWebhook } from './running-webhook';

// Deliveries of the events the service consumes, to a real HTTP receiver: signed (Standard Webhooks),
// only the subscribed types of the endpoint's own account, retried on failure and by hand, never
// redirected, timed out, and an endpoint that keeps failing disabled with `webhook.disabled`.
// Two requests per endpoint at once (deliveries are pipelined): a slow endpoint's queue takes many
// rounds of the timeout (600 ms here).

let hooks: RunningWebhook;
let events: EventLog;
const account = newAccount();

beforeAll(async () => {
  hooks = await startWebhook({ webhookEndpointConcurrency: 2 });
  events = await EventLog.open(hooks.t.natsUrl, hooks.t.stream);
});

afterAll(async () => {
  await events?.close();
  await hooks?.stop();
});

const endpoint = (path: string, types: string[], accountId = account) => hooks.endpoint(accountId, path, types);
const issue = async (email?: string, accountId = account) => (await hooks.licenceCreated(accountId, email)).key;
const latest = async (endpointId: string, accountId = account) => (await hooks.deliveries(accountId, endpointId))[0];
const disabledEvent = (id: string, timeoutMs?: number) =>
  events.waitFor(
    (e) => e.type === 'webhook.disabled' && (e.data as { endpoint: { id: string } }).endpoint.id === id,
    timeoutMs,
  );

it('delivers a signed Standard Webhooks request that independent code verifies', async () => {
  const { secret } = await endpoint('/signed', ['license.created']);
  const key = await issue('signed@example.com');
  const [req] = await hooks.receiver.waitFor('/signed', 1);
  expect(req.headers['content-type']).toBe('application/json');
  expect(req.headers['webhook-id']).toMatch(/^evt_/);
  expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
  expect(verifySignature(secret, req)).toBe(true);
  expect(verifySignature(`whsec_${Buffer.alloc(24).toString('base64')}`, req)).toBe(false);
  expect(verifySignature(secret, { ...req, body: req.body.replace('signed@', 'forged@') })).toBe(false);
  expect(JSON.parse(req.body)).toEqual({
    id: req.headers['webhook-id'],
    type: 'license.created',
    created_at: expect.any(String),
    data: { license: expect.objectContaining({ key, customer_email: 'signed@example.com' }) },
  });
});

it('sends only the subscribed types, and never another account’s events', async () => {
  const productsOnly = await endpoint('/products-only', ['product.created']);
  await endpoint('/everything-mine', ['*']);
  const otherAccount = newAccount();
  const theirs = await endpoint('/other-account', ['*'], otherAccount);
  await issue();
  const product = { id: 'prod_another', name: 'Another', description: '', created_at: new Date().toISOString() };
  await hooks.publish(eventOf('product.created', account, { product }));
  // Once an endpoint of this account has both events, both were fanned out: any delivery the fan-out
  // made for the other endpoints exists by now (deliveries are created per event, for all endpoints at once).
  await eventually(() =>
    expect(hooks.receiver.at('/everything-mine').map((r) => JSON.parse(r.body).type)).toEqual(
      expect.arrayContaining(['license.created', 'product.created']),
    ),
  );
  const typesOf = async (id: string, accountId = account) =>
    (await hooks.deliveries(accountId, id)).map((d) => d.event_type);
  expect(await typesOf(productsOnly.id)).toEqual(['product.created']);
  expect(await typesOf(theirs.id, otherAccount)).toEqual([]);
  await hooks.receiver.waitFor('/products-only', 1);
  expect(hooks.receiver.at('/products-only').map((r) => JSON.parse(r.body).type)).toEqual(['product.created']);
  expect(hooks.receiver.at('/other-account')).toEqual([]);
});

it('delivers license.deleted to an endpoint subscribed to it (the licence as it was)', async () => {
  await endpoint('/deleted', ['license.deleted']);
  const license = {
    id: 'lic_01JD8Z3K6Q2W4E5R6T7Y8V9XDE',
    key: 'LIC-DELETED',
    product_id: 'prod_deleted',
    customer_email: 'del@example.com',
    status: 'active' as const,
    expires_at: null,
    created_at: new Date().toISOString(),
    entitlements: [],
  };
  await hooks.publish(eventOf('license.deleted', account, { license }));
  const [delivered] = await hooks.receiver.waitFor('/deleted', 1);
  expect(JSON.parse(delivered.body)).toMatchObject({ type: 'license.deleted', data: { license: { id: license.id } } });
});

it('retries a 500 and records the delivery as delivered on the second attempt', async () => {
  hooks.receiver.answer('/flaky', 500, 200);
  const { id } = await endpoint('/flaky', ['license.created']);
  await issue();
  const [first, second] = await hooks.receiver.waitFor('/flaky', 2);
  expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']); // the same event, for receivers that deduplicate
  await eventually(async () =>
    expect(await latest(id)).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_status_code: 200,
      event_type: 'license.created',
      last_latency_ms: expect.any(Number),
    }),
  );
});

it('disables an endpoint that answers 410 Gone', async () => {
  hooks.receiver.answer('/gone', 410);
  const { id } = await endpoint('/gone', ['license.created']);
  await issue();
  await hooks.receiver.waitFor('/gone', 1);
  await eventually(async () => expect((await hooks.api.getEndpoint({ account_id: account, id })).enabled).toBe(false));
  expect(await latest(id)).toMatchObject({ status: 'failed', last_status_code: 410 });
  const disabled = await disabledEvent(id);
  expect(disabled.data).toMatchObject({ reason: 'the endpoint answered 410 Gone' });
});

it('checks the address again at connect time (a name that now resolves inside is refused)', async () => {
  const port = Number(new URL(hooks.receiver.url).port);
  const strict = { httpsOnly: false, allowLoopback: false };
  const byName = await send(`http://localhost:${port}/rebind`, {}, '{}', 1000, strict);
  expect(byName).toMatchObject({
    statusCode: null,
    error: expect.stringMatching(/^refused: the URL must point to a public address$/),
  });
  const byAddress = await send(`http://127.0.0.1:${port}/rebind`, {}, '{}', 1000, strict);
  expect(byAddress.error).toMatch(/^refused: the URL must point to a public address$/);
  expect(hooks.receiver.at('/rebind')).toEqual([]);
});

// That other endpoints are not held back by a slow one is shown by "a slow endpoint with a queue of deliveries" below.
it('a receiver that hangs times out and is retried, and the next endpoint still gets the event', async () => {
  hooks.receiver.answer('/hangs', 'hang');
  await endpoint('/hangs', ['license.created']);
  await endpoint('/quick', ['license.created']);
  await issue();
  await hooks.receiver.waitFor('/quick', 1);
  await hooks.receiver.waitFor('/hangs', 2, 8000); // timed out (600 ms in tests), then tried again
});

it('a failed delivery can be retried by hand; unknown ids and other accounts are not found', async () => {
  hooks.receiver.answer('/manual', 503, 503, 503, 503, 200);
  const { id } = await endpoint('/manual', ['license.created']);
  await issue();
  await hooks.receiver.waitFor('/manual', 4); // first attempt and three retries, then failed
  const d = await eventually(async () => {
    const last = await latest(id);
    expect(last).toMatchObject({ status: 'failed', attempts: 4 });
    return last;
  });
  const retried = await hooks.api.retryDelivery({ account_id: account, endpoint_id: id, delivery_id: d.id });
  expect(retried.status).toBe('pending');
  await hooks.receiver.waitFor('/manual', 5);
  const code = (p: Promise<unknown>) =>
    p.then(
      () => 'answered',
      (e: { code: string }) => e.code,
    );
  expect(await code(hooks.api.retryDelivery({ account_id: account, endpoint_id: id, delivery_id: 'dlv_nope' }))).toBe(
    'not_found',
  );
  const other = newAccount();
  expect(await code(hooks.deliveries(other, id))).toBe('not_found');
  expect(await code(hooks.api.sendTestEvent({ account_id: other, id }))).toBe('not_found');
});

it('does not follow redirects: a 3xx is a failed attempt', async () => {
  hooks.receiver.answer('/moved', 302, 200);
  const { id } = await endpoint('/moved', ['*']);
  await hooks.api.sendTestEvent({ account_id: account, id });
  await hooks.receiver.waitFor('/moved', 2); // the 302 was not followed but retried at the same URL
  await eventually(async () => expect(await latest(id)).toMatchObject({ status: 'delivered', attempts: 2 }));
  expect(hooks.receiver.at('/redirected/moved')).toEqual([]); // where the Location pointed
  expect(
    hooks.receiver.received.filter(
      (r) => r.path !== '/moved' && r.headers['webhook-id'] === hooks.receiver.at('/moved')[0].headers['webhook-id'],
    ),
  ).toEqual([]);
});

it("a slow endpoint with a queue of deliveries does not hold back another tenant's: theirs arrives while the slow one is still on its first attempts", async () => {
  const other = newAccount();
  await endpoint('/other-tenant', ['license.created'], other);
  const queued = 48;
  hooks.receiver.answer('/slow-tenant', ...Array<'hang'>(3 * queued).fill('hang'));
  const slow = await endpoint('/slow-tenant', ['license.created']);
  // Published eight at a time, so the queue is built in a fraction of the time it takes to send: the
  // slow endpoint starts on it while it grows (each attempt waits out the 600 ms timeout, two at a time).
  for (let i = 0; i < queued; i += 8)
    await Promise.all(Array.from({ length: 8 }, (_, j) => issue(`queued-${i + j}@example.com`)));
  await hooks.receiver.waitFor('/slow-tenant', 1);
  await issue('them@example.com', other);
  await hooks.receiver.waitFor('/other-tenant', 1, 20_000);
  // Were a dispatch pass to wait for every endpoint, this would come only after all the slow first
  // attempts (48 × 600 ms, two at a time: 14 s). Any number below that shows it did not wait for
  // them; a tighter bound would measure how busy the machine is.
  expect(hooks.receiver.at('/slow-tenant').length).toBeLessThan(queued);
  await hooks.api.deleteEndpoint({ account_id: account, id: slow.id }); // its queue is dropped, not left running
}, 60_000);

// Last in this file: it moves the service's clock on by five days.
it('an endpoint that fails everything for 5 days is disabled, with webhook.disabled', async () => {
  hooks.receiver.answer('/always-down', 500);
  const { id } = await endpoint('/always-down', ['license.created']);
  await issue();
  await hooks.receiver.waitFor('/always-down', 1);
  // The failure is recorded (failing_since set), and one failure alone does not disable.
  await eventually(async () => expect(await latest(id)).toMatchObject({ last_status_code: 500 }));
  expect((await hooks.api.getEndpoint({ account_id: account, id })).enabled).toBe(true);
  hooks.clock.advance(5 * 86_400_000 + 1000);
  await issue();
  const disabled = await disabledEvent(id, 10_000);
  expect(disabled.data).toMatchObject({ reason: 'every delivery failed for 5 days' });
  expect((await hooks.api.getEndpoint({ account_id: account, id })).enabled).toBe(false);
});
