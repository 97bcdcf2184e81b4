import { client, startStack, TestClock, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { WebhookReceiver, verifySignature } from '../support/webhook-receiver';
import { send } from '../../services/webhook/src/jobs/sender';
import { eventually } from '../support/eventually';

let stack: Stack;
let receiver: WebhookReceiver;
let api: ReturnType<typeof client>;
let productId: string;
let events: EventLog;
const clock = new TestClock();

beforeAll(async () => {
  // Two requests per endpoint at once: deliveries are pipelined, and the slow endpoint's queue below
  // still takes many rounds of the timeout.
  stack = await startStack({ webhookEndpointConcurrency: 2 }, {}, clock);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  receiver = await WebhookReceiver.start();
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  productId = (await api('POST', '/api/v1/products', { name: 'Hooked' })).body.id;
});

afterAll(async () => {
  await events?.close();
  await receiver?.stop();
  await stack?.stop();
});

const endpoint = async (path: string, events: string[], as = api) =>
  (await as('POST', '/api/v1/webhooks', { url: `${receiver.url}${path}`, events })).body as {
    id: string;
    secret: string;
  };
const issue = async (email = 'hook@example.com') =>
  (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: email })).body.license_key as string;

it('delivers a signed Standard Webhooks request that independent code verifies', async () => {
  const { secret } = await endpoint('/signed', ['license.created']);
  const key = await issue('signed@example.com');
  const [req] = await receiver.waitFor('/signed', 1);
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
  const otherAccount = client(stack.url, (await stack.newAccount()).apiKey);
  const theirs = await endpoint('/other-account', ['*'], otherAccount);
  await issue();
  await api('POST', '/api/v1/products', { name: 'Another' });
  // Once an endpoint of this account has both events, both were fanned out: any delivery the fan-out
  // made for the other endpoints exists by now (deliveries are created per event, for all endpoints at once).
  await eventually(() =>
    expect(receiver.at('/everything-mine').map((r) => JSON.parse(r.body).type)).toEqual(
      expect.arrayContaining(['license.created', 'product.created']),
    ),
  );
  const typesOf = async (id: string, as = api) =>
    ((await as('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data as { event_type: string }[]).map(
      (d) => d.event_type,
    );
  expect(await typesOf(productsOnly.id)).toEqual(['product.created']);
  expect(await typesOf(theirs.id, otherAccount)).toEqual([]);
  await receiver.waitFor('/products-only', 1);
  expect(receiver.at('/products-only').map((r) => JSON.parse(r.body).type)).toEqual(['product.created']);
  expect(receiver.at('/other-account')).toEqual([]);
});

it('retries a 500 and records the delivery as delivered on the second attempt', async () => {
  receiver.answer('/flaky', 500, 200);
  const { id } = await endpoint('/flaky', ['license.created']);
  await issue();
  const [first, second] = await receiver.waitFor('/flaky', 2);
  expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']); // the same event, for receivers that deduplicate
  await eventually(async () =>
    expect((await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data[0]).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_status_code: 200,
      event_type: 'license.created',
      last_latency_ms: expect.any(Number),
    }),
  );
});

it('disables an endpoint that answers 410 Gone', async () => {
  receiver.answer('/gone', 410);
  const { id } = await endpoint('/gone', ['license.created']);
  await issue();
  await receiver.waitFor('/gone', 1);
  await eventually(async () => expect((await api('GET', `/api/v1/webhooks/${id}`)).body.enabled).toBe(false));
  expect((await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data[0]).toMatchObject({
    status: 'failed',
    last_status_code: 410,
  });
  const disabled = await events.waitFor(
    (e) => e.type === 'webhook.disabled' && (e.data as { endpoint: { id: string } }).endpoint.id === id,
  );
  expect(disabled.data).toMatchObject({ reason: 'the endpoint answered 410 Gone' });
});

it('an endpoint that fails everything for 5 days is disabled, with webhook.disabled', async () => {
  receiver.answer('/always-down', 500);
  const { id } = await endpoint('/always-down', ['license.created']);
  await issue();
  await receiver.waitFor('/always-down', 1);
  // The failure is recorded (failing_since set), and one failure alone does not disable.
  await eventually(async () =>
    expect((await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data[0]).toMatchObject({
      last_status_code: 500,
    }),
  );
  expect((await api('GET', `/api/v1/webhooks/${id}`)).body.enabled).toBe(true);
  clock.advance(5 * 86_400_000 + 1000);
  await issue();
  const disabled = await events.waitFor(
    (e) => e.type === 'webhook.disabled' && (e.data as { endpoint: { id: string } }).endpoint.id === id,
    10_000,
  );
  expect(disabled.data).toMatchObject({ reason: 'every delivery failed for 5 days' });
  expect((await api('GET', `/api/v1/webhooks/${id}`)).body.enabled).toBe(false);
});

it('an event that happened while the webhook service was down is delivered once it is back', async () => {
  await endpoint('/while-down', ['license.created']);
  await stack.stopService('webhook');
  const key = await issue('down@example.com'); // the API does not depend on the webhook service
  await stack.restartService('webhook');
  const [req] = await receiver.waitFor('/while-down', 1);
  expect(JSON.parse(req.body).data.license.key).toBe(key);
});

it('stopped with deliveries pending and started again, every event arrives, none twice once accepted', async () => {
  receiver.answer('/restart', 503, 200);
  await endpoint('/restart', ['license.created']);
  const keys = [await issue(), await issue(), await issue()];
  // Some first attempts failed: retries are pending in MongoDB. (On a loaded machine, right after the
  // previous test restarted the webhook service, the first attempt has been seen to take over 10 s.)
  await receiver.waitFor('/restart', 1, 25_000);
  await stack.stopService('webhook');
  await stack.restartService('webhook');
  // The receiver answered 503 to the first request only; everything after was accepted.
  const accepted = await eventually(
    () => {
      const byId = new Map<string, number>();
      for (const r of receiver.at('/restart').slice(1))
        byId.set(String(r.headers['webhook-id']), (byId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
      expect(byId.size).toBe(3);
      return byId;
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  expect([...accepted.values()]).toEqual([1, 1, 1]);
  const delivered = receiver.at('/restart').map((r) => JSON.parse(r.body).data.license.key);
  expect(new Set(delivered)).toEqual(new Set(keys));
  // And an event that happens after the restart is fanned out by the new instance. (Under load this has
  // been seen to take over 10 s: the stopped instance's pull request may still be handed events until it
  // expires, and those wait out ack_wait. See events/fanout.ts.)
  const after = await issue();
  await receiver.waitFor('/restart', 5, 30_000);
  expect(receiver.at('/restart').some((r) => JSON.parse(r.body).data.license.key === after)).toBe(true);
}, 90_000);

it('checks the address again at connect time (a name that now resolves inside is refused)', async () => {
  const port = Number(new URL(receiver.url).port);
  const strict = { httpsOnly: false, allowLoopback: false };
  const byName = await send(`http://localhost:${port}/rebind`, {}, '{}', 1000, strict);
  expect(byName).toMatchObject({
    statusCode: null,
    error: expect.stringMatching(/^refused: the URL must point to a public address$/),
  });
  const byAddress = await send(`http://127.0.0.1:${port}/rebind`, {}, '{}', 1000, strict);
  expect(byAddress.error).toMatch(/^refused: the URL must point to a public address$/);
  expect(receiver.at('/rebind')).toEqual([]);
});

// That other endpoints are not held back by a slow one is shown by "a slow endpoint with a queue of deliveries" below.
it('a receiver that hangs times out and is retried, and the next endpoint still gets the event', async () => {
  receiver.answer('/hangs', 'hang');
  await endpoint('/hangs', ['license.created']);
  await endpoint('/quick', ['license.created']);
  await issue();
  await receiver.waitFor('/quick', 1);
  await receiver.waitFor('/hangs', 2, 8000); // timed out (600 ms in tests), then tried again
});

it('during a secret rotation both secrets sign, and the test event can be sent on demand', async () => {
  const { id, secret } = await endpoint('/rotating', ['*']);
  const rotated = (await api('POST', `/api/v1/webhooks/${id}/rotate-secret`)).body.secret as string;
  const sent = await api('POST', `/api/v1/webhooks/${id}/test`);
  expect(sent.status).toBe(202);
  const [req] = await receiver.waitFor('/rotating', 1);
  expect(JSON.parse(req.body).type).toBe('webhook.test');
  expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
  expect(verifySignature(secret, req)).toBe(true);
  expect(verifySignature(rotated, req)).toBe(true);
});

it('a failed delivery can be retried by hand; bad ids are 404', async () => {
  receiver.answer('/manual', 503, 503, 503, 503, 200);
  const { id } = await endpoint('/manual', ['license.created']);
  await issue();
  await receiver.waitFor('/manual', 4); // first attempt and three retries, then failed
  const d = await eventually(async () => {
    const latest = (await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data[0];
    expect(latest).toMatchObject({ status: 'failed', attempts: 4 });
    return latest as { id: string };
  });
  expect((await api('POST', `/api/v1/webhooks/${id}/deliveries/${d.id}/retry`)).body.status).toBe('pending');
  await receiver.waitFor('/manual', 5);
  expect((await api('POST', `/api/v1/webhooks/${id}/deliveries/dlv_nope/retry`)).status).toBe(404);
  const other = client(stack.url, (await stack.newAccount()).apiKey);
  expect((await other('GET', `/api/v1/webhooks/${id}/deliveries`)).status).toBe(404);
  expect((await other('POST', `/api/v1/webhooks/${id}/test`)).status).toBe(404);
});

it('does not follow redirects: a 3xx is a failed attempt', async () => {
  receiver.answer('/moved', 302, 200);
  const { id } = await endpoint('/moved', ['*']);
  await api('POST', `/api/v1/webhooks/${id}/test`);
  await receiver.waitFor('/moved', 2); // the 302 was not followed but retried at the same URL
  await eventually(async () =>
    expect((await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data[0]).toMatchObject({
      status: 'delivered',
      attempts: 2,
    }),
  );
  expect(receiver.at('/redirected/moved')).toEqual([]); // where the Location pointed
  expect(
    receiver.received.filter(
      (r) => r.path !== '/moved' && r.headers['webhook-id'] === receiver.at('/moved')[0].headers['webhook-id'],
    ),
  ).toEqual([]);
});

it('the previous secret stops signing 24 hours after a rotation', async () => {
  const { id, secret } = await endpoint('/overlap', ['*']);
  const rotated = (await api('POST', `/api/v1/webhooks/${id}/rotate-secret`)).body.secret as string;
  clock.advance(24 * 3600_000 + 1000);
  await api('POST', `/api/v1/webhooks/${id}/test`);
  const [req] = await receiver.waitFor('/overlap', 1);
  expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(1);
  expect(verifySignature(rotated, req)).toBe(true);
  expect(verifySignature(secret, req)).toBe(false);
});

it('after three rotations only the newest two secrets sign, and after the overlap only the newest', async () => {
  const { id, secret } = await endpoint('/rotated-thrice', ['*']);
  const made = [secret];
  for (let i = 0; i < 3; i++) made.push((await api('POST', `/api/v1/webhooks/${id}/rotate-secret`)).body.secret);
  await api('POST', `/api/v1/webhooks/${id}/test`);
  const [during] = await receiver.waitFor('/rotated-thrice', 1);
  expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
  expect(made.map((s) => verifySignature(s, during))).toEqual([false, false, true, true]);
  clock.advance(24 * 3600_000 + 1000);
  await api('POST', `/api/v1/webhooks/${id}/test`);
  const [, after] = await receiver.waitFor('/rotated-thrice', 2);
  expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
  expect(made.map((s) => verifySignature(s, after))).toEqual([false, false, false, true]);
});

it("a slow endpoint with a queue of deliveries does not hold back another tenant's: theirs arrives while the slow one is still on its first attempts", async () => {
  const other = await stack.newAccount();
  const theirs = client(stack.url, other.apiKey);
  await endpoint('/other-tenant', ['license.created'], theirs);
  const product = (await theirs('POST', '/api/v1/products', { name: 'Theirs' })).body.id;
  const queued = 48;
  receiver.answer('/slow-tenant', ...Array<'hang'>(3 * queued).fill('hang'));
  const slow = await endpoint('/slow-tenant', ['license.created']);
  // Issued eight at a time, so the queue is built in a fraction of the time it takes to send: the slow
  // endpoint starts on it while it grows (each attempt waits out the 600 ms timeout, two at a time).
  for (let i = 0; i < queued; i += 8)
    await Promise.all(Array.from({ length: 8 }, (_, j) => issue(`queued-${i + j}@example.com`)));
  await receiver.waitFor('/slow-tenant', 1);
  await theirs('POST', '/api/v1/licenses', { product_id: product, customer_email: 'them@example.com' });
  await receiver.waitFor('/other-tenant', 1, 20_000);
  // Before: a dispatch pass waited for every endpoint, so this came only after all the slow first
  // attempts (48 × 600 ms, two at a time: 14 s). Any number below that shows it did not wait for them;
  // a tighter bound would measure how busy the machine is.
  expect(receiver.at('/slow-tenant').length).toBeLessThan(queued);
  expect((await api('DELETE', `/api/v1/webhooks/${slow.id}`)).status).toBe(204); // its queue is dropped, not left running
}, 60_000);

it('an account may have a bounded number of endpoints', async () => {
  const acct = await stack.newAccount();
  const mine = client(stack.url, acct.apiKey);
  const statuses: number[] = [];
  for (let i = 0; i < 21; i++)
    statuses.push(
      (await mine('POST', '/api/v1/webhooks', { url: `${receiver.url}/cap-${i}`, events: ['webhook.test'] })).status,
    );
  expect(statuses.slice(0, 20).every((s) => s === 201)).toBe(true);
  expect(statuses[20]).toBe(409);
  // A deleted endpoint frees its place for a new one.
  const first = (await mine('GET', '/api/v1/webhooks?limit=1')).body.data[0].id as string;
  expect((await mine('DELETE', `/api/v1/webhooks/${first}`)).status).toBe(204);
  expect(
    (await mine('POST', '/api/v1/webhooks', { url: `${receiver.url}/cap-again`, events: ['webhook.test'] })).status,
  ).toBe(201);
  expect(
    (await mine('POST', '/api/v1/webhooks', { url: `${receiver.url}/cap-over`, events: ['webhook.test'] })).status,
  ).toBe(409);
});

it('the endpoint cap holds when many are created at once', async () => {
  const acct = await stack.newAccount();
  const mine = client(stack.url, acct.apiKey);
  const burst = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      mine('POST', '/api/v1/webhooks', { url: `${receiver.url}/burst-${i}`, events: ['webhook.test'] }),
    ),
  );
  const created = burst.filter((r) => r.status === 201).length;
  expect(burst.every((r) => r.status === 201 || r.status === 409)).toBe(true);
  expect(created).toBeGreaterThan(0);
  expect(created).toBeLessThanOrEqual(20);
  const listed = (await mine('GET', '/api/v1/webhooks?limit=100')).body.data as unknown[];
  expect(listed).toHaveLength(created);
});
