import { client, startStack, type Stack } from '../support/stack';

let stack: Stack;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  stack = await startStack();
  api = client(stack.url, (await stack.newAccount()).apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

const create = (over: Record<string, unknown> = {}) =>
  api('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['license.created'], ...over });

it('creates an endpoint and shows its secret exactly once', async () => {
  const res = await create({ description: 'CRM sync', events: ['license.created', 'checkout.completed'] });
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    id: expect.stringMatching(/^we_/),
    url: 'http://127.0.0.1:9/hook',
    events: ['license.created', 'checkout.completed'],
    description: 'CRM sync',
    enabled: true,
    created_at: expect.any(String),
    secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
  });
  const read = await api('GET', `/api/v1/webhooks/${res.body.id}`);
  expect(read.body).not.toHaveProperty('secret');
  expect((await api('GET', '/api/v1/webhooks')).body.data.map((e: { id: string }) => e.id)).toContain(res.body.id);
  expect(JSON.stringify((await api('GET', '/api/v1/webhooks')).body)).not.toContain('whsec_');
});

it('updates, disables, rotates the secret and deletes', async () => {
  const { id, secret } = (await create()).body;
  const patched = await api('PATCH', `/api/v1/webhooks/${id}`, {
    events: ['*'],
    enabled: false,
    description: 'all events',
  });
  expect(patched.body).toMatchObject({ events: ['*'], enabled: false, description: 'all events' });
  const rotated = await api('POST', `/api/v1/webhooks/${id}/rotate-secret`);
  expect(rotated.status).toBe(200);
  expect(rotated.body.secret).toMatch(/^whsec_/);
  expect(rotated.body.secret).not.toBe(secret);
  expect((await api('DELETE', `/api/v1/webhooks/${id}`)).status).toBe(204);
  expect((await api('GET', `/api/v1/webhooks/${id}`)).status).toBe(404);
  expect((await api('DELETE', `/api/v1/webhooks/${id}`)).status).toBe(404);
});

it.each([
  [{ events: ['license.exploded'] }, 'events', /valid: .*license\.created/],
  [{ events: [] }, 'events', /must not be empty/],
  [{ events: 'license.created' }, 'events', /list of strings/],
  [{ events: ['*', 'license.created'] }, 'events', /every event/],
  [{ url: undefined }, 'url', /required/],
  [{ url: 'ftp://127.0.0.1/hook' }, 'url', /https/],
  [{ url: 'http://169.254.169.254/latest/meta-data' }, 'url', /must point to a public address/],
  [{ url: 'http://10.0.0.1/hook' }, 'url', /must point to a public address/],
  [{ url: 'http://192.168.0.10/hook' }, 'url', /must point to a public address/],
  [{ color: 'blue' }, 'color', /unknown field/],
])('refuses %p with a 400 naming the problem', async (over, field, message) => {
  const res = await create(over);
  expect(res.status).toBe(400);
  expect(res.body.errors).toEqual(
    expect.arrayContaining([expect.objectContaining({ field, message: expect.stringMatching(message) })]),
  );
});

it('refuses loopback receivers unless the service was started with the explicit development setting', async () => {
  const strict = await startStack({ webhookAllowLoopback: false });
  try {
    const res = await client(strict.url, (await strict.newAccount()).apiKey)('POST', '/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['*'],
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^url must point to a public address$/);
    const named = await client(strict.url, (await strict.newAccount()).apiKey)('POST', '/api/v1/webhooks', {
      url: 'http://localhost:9/hook',
      events: ['*'],
    });
    expect(named.status).toBe(400); // a hostname that resolves to loopback
  } finally {
    await strict.stop();
  }
});

it('another account gets 404 for every endpoint operation', async () => {
  const { id } = (await create()).body;
  const other = client(stack.url, (await stack.newAccount()).apiKey);
  for (const [method, path] of [
    ['GET', `/api/v1/webhooks/${id}`],
    ['PATCH', `/api/v1/webhooks/${id}`],
    ['DELETE', `/api/v1/webhooks/${id}`],
    ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
  ] as const) {
    expect({
      method,
      status: (await other(method, path, method === 'PATCH' ? { enabled: false } : undefined)).status,
    }).toEqual({ method, status: 404 });
  }
  expect((await other('GET', '/api/v1/webhooks')).body.data).toEqual([]);
  expect((await api('GET', `/api/v1/webhooks/${id}`)).body.enabled).toBe(true);
});
