import type { WebhookDelivery, WebhookEndpoint } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// The REST face of the webhook service: the gateway turns /api/v1/webhooks requests into the webhook
// service's gRPC calls (faked here) for the key's account, refuses a body it cannot pass on before
// the service is asked, and answers the service's replies and refusals with the statuses and shapes
// of the API (201 with the secret shown once, 204, 202, problem JSON naming the field, 404, 409).
// What the service itself does with these calls: services/webhook/test/component.

let gw: GatewayOverFakes;
const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const known = newId('we');
const endpoint = (over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id: known,
  account_id: '',
  url: 'http://127.0.0.1:9/hook',
  events: ['license.created'],
  description: '',
  enabled: true,
  created_at: '2026-01-01T00:00:00.000Z',
  ...over,
});
const delivery: WebhookDelivery = {
  id: 'dlv_1',
  endpoint_id: known,
  event_id: 'evt_1',
  event_type: 'license.created',
  status: 'delivered',
  attempts: 2,
  last_status_code: 200,
  last_error: '',
  last_latency_ms: 12,
  next_attempt_at: '',
  created_at: '2026-01-01T00:00:00.000Z',
  delivered_at: '2026-01-01T00:00:01.000Z',
};
const notFound = () => {
  throw AppError.notFound('webhook endpoint');
};
const ours = (id: string) => (id === known ? endpoint() : notFound());

beforeAll(async () => {
  gw = await startGatewayOverFakes({
    webhook: {
      createEndpoint: ({ url, events, description }) => ({
        endpoint: endpoint({ url, events, description }),
        secret: SECRET,
      }),
      getEndpoint: ({ id }) => ours(id),
      listEndpoints: () => ({ data: [endpoint()], page: { has_more: true, next_cursor: known } }),
      updateEndpoint: ({ id, events, enabled, description }) => ({
        ...ours(id),
        events,
        enabled: enabled!,
        description: description!,
      }),
      deleteEndpoint: ({ id }) => ours(id),
      rotateSecret: ({ id }) => ({ endpoint: ours(id), secret: `${SECRET.slice(0, -4)}AAAA` }),
      listDeliveries: ({ endpoint_id }) => {
        ours(endpoint_id);
        return { data: [delivery], page: { has_more: false, next_cursor: '' } };
      },
      retryDelivery: ({ endpoint_id, delivery_id }) =>
        delivery_id === delivery.id && ours(endpoint_id) ? { ...delivery, status: 'pending' } : notFound(),
      sendTestEvent: ({ id }) => {
        ours(id);
        return { ...delivery, event_type: 'webhook.test', status: 'pending', attempts: 0 };
      },
    },
  });
});

afterAll(async () => {
  await gw?.stop();
});

it('creates an endpoint: 201, its Location, and the secret shown this once', async () => {
  const res = await gw.request('POST', '/api/v1/webhooks', {
    url: 'http://127.0.0.1:9/hook',
    events: ['license.created', 'checkout.completed'],
    description: 'CRM sync',
  });
  expect(res.status).toBe(201);
  expect(res.headers.get('location')).toBe(`/api/v1/webhooks/${known}`);
  expect(res.body).toEqual({
    id: known,
    url: 'http://127.0.0.1:9/hook',
    events: ['license.created', 'checkout.completed'],
    description: 'CRM sync',
    enabled: true,
    created_at: '2026-01-01T00:00:00.000Z',
    secret: SECRET,
  });
  expect(gw.peers.webhook.requestsTo('createEndpoint').at(-1)).toEqual({
    account_id: gw.account,
    url: 'http://127.0.0.1:9/hook',
    events: ['license.created', 'checkout.completed'],
    description: 'CRM sync',
  });
  const read = await gw.request('GET', `/api/v1/webhooks/${known}`);
  expect(read.status).toBe(200);
  expect(read.body).not.toHaveProperty('secret');
  const listed = await gw.request('GET', '/api/v1/webhooks?limit=1');
  expect(listed.body).toEqual({ data: [expect.objectContaining({ id: known })], has_more: true, next_cursor: known });
  expect(JSON.stringify(listed.body)).not.toContain('whsec_');
  expect(gw.peers.webhook.requestsTo('listEndpoints').at(-1)).toEqual({
    account_id: gw.account,
    page: { limit: 1, starting_after: '' },
  });
});

it('updates, rotates the secret (200, shown again) and deletes (204); an unknown endpoint is 404 each time', async () => {
  const patched = await gw.request('PATCH', `/api/v1/webhooks/${known}`, {
    events: ['*'],
    enabled: false,
    description: 'all events',
  });
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({ events: ['*'], enabled: false, description: 'all events' });
  const rotated = await gw.request('POST', `/api/v1/webhooks/${known}/rotate-secret`);
  expect(rotated.status).toBe(200);
  expect(rotated.body.secret).toMatch(/^whsec_/);
  expect(rotated.body.secret).not.toBe(SECRET);
  expect((await gw.request('DELETE', `/api/v1/webhooks/${known}`)).status).toBe(204);
  const other = newId('we');
  for (const [method, path] of [
    ['GET', `/api/v1/webhooks/${other}`],
    ['PATCH', `/api/v1/webhooks/${other}`],
    ['DELETE', `/api/v1/webhooks/${other}`],
    ['POST', `/api/v1/webhooks/${other}/rotate-secret`],
    ['GET', `/api/v1/webhooks/${other}/deliveries`],
    ['POST', `/api/v1/webhooks/${other}/test`],
    ['POST', `/api/v1/webhooks/${known}/deliveries/dlv_nope/retry`],
  ] as const) {
    const res = await gw.request(method, path, method === 'PATCH' ? { enabled: false } : undefined);
    expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  }
});

it.each([
  [{ events: [] }, 'events', /must not be empty/],
  [{ events: 'license.created' }, 'events', /list of strings/],
  [{ url: undefined }, 'url', /required/],
  [{ color: 'blue' }, 'color', /unknown field/],
])('refuses the body %p with a 400 naming the problem, before the service is asked', async (over, field, message) => {
  const asked = gw.peers.webhook.requestsTo('createEndpoint').length;
  const res = await gw.request('POST', '/api/v1/webhooks', {
    url: 'http://127.0.0.1:9/hook',
    events: ['license.created'],
    ...over,
  });
  expect(res.status).toBe(400);
  expect(res.body.errors).toEqual(
    expect.arrayContaining([expect.objectContaining({ field, message: expect.stringMatching(message) })]),
  );
  expect(gw.peers.webhook.requestsTo('createEndpoint')).toHaveLength(asked);
});

it("passes the service's refusals on: a field it refuses is a 400 naming it, the endpoint cap a 409", async () => {
  gw.peers.webhook.handle({
    createEndpoint: ({ url }) => {
      if (url.includes('cap')) throw new AppError('conflict', 'this account already has 20 webhook endpoints');
      throw AppError.invalid('url', 'url must point to a public address');
    },
  });
  const refused = await gw.request('POST', '/api/v1/webhooks', { url: 'http://10.0.0.1/hook', events: ['*'] });
  expect(refused.status).toBe(400);
  expect(refused.body.detail).toMatch(/^url must point to a public address$/);
  expect(refused.body.errors).toEqual([{ field: 'url', message: 'url must point to a public address' }]);
  const capped = await gw.request('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/cap', events: ['*'] });
  expect(capped.status).toBe(409);
});

it('lists deliveries in their REST shape, sends the test event (202) and retries a delivery by hand', async () => {
  const list = await gw.request('GET', `/api/v1/webhooks/${known}/deliveries?limit=100`);
  expect(list.status).toBe(200);
  expect(list.body).toEqual({
    data: [
      {
        id: 'dlv_1',
        event_id: 'evt_1',
        event_type: 'license.created',
        status: 'delivered',
        attempts: 2,
        last_status_code: 200,
        last_error: null,
        last_latency_ms: 12,
        next_attempt_at: null,
        delivered_at: '2026-01-01T00:00:01.000Z',
        created_at: '2026-01-01T00:00:00.000Z',
      },
    ],
    has_more: false,
    next_cursor: null,
  });
  expect(gw.peers.webhook.requestsTo('listDeliveries').at(-1)).toEqual({
    account_id: gw.account,
    endpoint_id: known,
    page: { limit: 100, starting_after: '' },
  });
  const test = await gw.request('POST', `/api/v1/webhooks/${known}/test`);
  expect(test.status).toBe(202);
  expect(test.body).toMatchObject({ event_type: 'webhook.test', status: 'pending', last_latency_ms: null });
  const retried = await gw.request('POST', `/api/v1/webhooks/${known}/deliveries/dlv_1/retry`);
  expect(retried.status).toBe(200);
  expect(retried.body.status).toBe('pending');
});
