import { client, startStack, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { PrivateNats } from '../support/nats-server';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';

// A successful API answer never loses its event: with NATS down, the licence is
// still issued (its event waits in the document's outbox) and the event is
// published once NATS is back.
// Own stack: it runs over a NATS server of its own, which it stops and starts again.
let nats: PrivateNats;
let stack: Stack;

beforeAll(async () => {
  nats = await PrivateNats.start();
  stack = await startStack({ natsUrl: nats.url });
});

afterAll(async () => {
  await stack?.stop();
  await nats?.stop();
});

it('a licence created while NATS is down produces license.created once NATS is back, and reaches a webhook', async () => {
  const { apiKey, accountId } = await stack.newAccount();
  const api = client(stack.url, apiKey);
  const productId = (await api('POST', '/api/v1/products', { name: 'Outage' })).body.id;
  const receiver = await WebhookReceiver.start();
  await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/outage`, events: ['license.created'] });

  await nats.pause();
  const created = await api('POST', '/api/v1/licenses', {
    product_id: productId,
    customer_email: 'outage@example.com',
  });
  expect(created.status).toBe(201);
  const key = created.body.license_key;
  // Reads and validation keep working without NATS too.
  expect((await api('POST', '/api/v1/keys/validate', { key })).body.code).toBe('valid');
  const status = await api('GET', '/api/v1/status');
  expect(status.body).toMatchObject({ status: 'degraded', dependencies: { nats: { status: 'down' } } });

  await nats.resume();
  const events = await EventLog.open(nats.url, stack.topology.stream);
  try {
    const event = await events.waitFor(
      (e) => e.type === 'license.created' && (e.data as { license: { key: string } }).license.key === key,
      15_000,
    );
    expect(event.account_id).toBe(accountId);
    // Published exactly once, however many times the relay retried: a licence created after it has
    // its event in the stream too (the relay publishes oldest first), and the first is still there once.
    const later = (
      await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'after@example.com' })
    ).body.license_key;
    await events.waitFor(
      (e) => e.type === 'license.created' && (e.data as { license: { key: string } }).license.key === later,
      15_000,
    );
    expect(events.all().filter((e) => e.id === event.id)).toHaveLength(1);
    // End to end: the webhook endpoint gets it too, once (with the later licence's: deliveries to one
    // endpoint run in parallel, so they may arrive in either order).
    const got = await receiver.waitFor('/outage', 2, 15_000);
    const keys = got.map((r) => JSON.parse(r.body).data.license.key);
    expect(keys.sort()).toEqual([key, later].sort());
    const req = got.find((r) => JSON.parse(r.body).data.license.key === key)!;
    expect(req.headers['webhook-id']).toBe(event.id);
  } finally {
    await events.close();
    await receiver.stop();
  }
});

// The gateway only listens to NATS (auth-cache evictions), so it starts and
// serves without it; until NATS is there it asks the account service on every
// request, and once NATS arrives its cache and the revocations that clear it work.
it('a gateway started while NATS is down serves at once, and caches keys once NATS is back', async () => {
  const { accountId } = await stack.newAccount();
  const { secret, api_key: key } = await stack.admin.createApiKey({
    account_id: accountId,
    scope: 'full',
    name: 'late-nats',
  });
  const authentications = async () => {
    const text = await (await fetch(stack.metricsUrls.account)).text();
    const line = text
      .split('\n')
      .find((l) => /^licensing_grpc_server_handled_total\{.*method="Authenticate".*code="OK"/.test(l));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  await nats.pause();
  const gw = await stack.extraGateway();
  const api = client(gw.url, secret);
  expect((await api('GET', '/readyz')).status).toBe(200);
  const before = await authentications();
  for (let i = 0; i < 3; i++) expect((await api('GET', '/api/v1/products')).status).toBe(200);
  expect(await authentications()).toBe(before + 3); // no cache without NATS
  expect((await api('GET', '/api/v1/status')).body).toMatchObject({ dependencies: { nats: { status: 'down' } } });

  await nats.resume();
  await eventually(async () => expect((await api('GET', '/api/v1/status')).body.dependencies.nats.status).toBe('ok'), {
    timeoutMs: 15_000,
    intervalMs: 200,
  });
  const cachedFrom = await authentications();
  for (let i = 0; i < 3; i++) expect((await api('GET', '/api/v1/products')).status).toBe(200);
  // At most once (the status polls may have cached the key already), not three times.
  expect(await authentications()).toBeLessThanOrEqual(cachedFrom + 1);

  // The key is cached for 30 s; only the revocation event, over the subscription
  // made before NATS was there, can end it sooner.
  await stack.admin.revokeApiKey({ account_id: accountId, key_id: key!.id });
  await eventually(async () => expect((await api('GET', '/api/v1/products')).status).toBe(401), {
    timeoutMs: 5_000,
    intervalMs: 50,
  });
});
