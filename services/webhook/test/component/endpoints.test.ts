import { AppError } from '@licensing/runtime';
import { newAccount, startWebhook, type RunningWebhook } from './running-webhook';

// Webhook endpoints over the service's gRPC API, as the gateway calls it: made with a secret shown
// once, changed, rotated and deleted; a URL or an event list the service cannot use is refused naming
// the field; one account never reaches another's endpoints. (The REST answers the gateway makes of
// these, and the refusals of a body before it reaches the service: gateway/test/component/webhook-routes.)

let hooks: RunningWebhook;
const account = newAccount();

beforeAll(async () => {
  hooks = await startWebhook();
});

afterAll(async () => {
  await hooks?.stop();
});

const create = (over: Partial<{ url: string; events: string[]; description: string }> = {}, accountId = account) =>
  hooks.api.createEndpoint({
    account_id: accountId,
    url: 'http://127.0.0.1:9/hook',
    events: ['license.created'],
    description: '',
    ...over,
  });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as AppError,
  );

it('creates an endpoint and shows its secret exactly once', async () => {
  const made = await create({ description: 'CRM sync', events: ['license.created', 'checkout.completed'] });
  expect(made.endpoint).toEqual({
    id: expect.stringMatching(/^we_/),
    account_id: account,
    url: 'http://127.0.0.1:9/hook',
    events: ['license.created', 'checkout.completed'],
    description: 'CRM sync',
    enabled: true,
    created_at: expect.any(String),
  });
  expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  const id = made.endpoint!.id;
  const read = await hooks.api.getEndpoint({ account_id: account, id });
  expect(read).not.toHaveProperty('secret');
  const listed = await hooks.api.listEndpoints({ account_id: account, page: { limit: 100, starting_after: '' } });
  expect(listed.data.map((e) => e.id)).toContain(id);
  expect(JSON.stringify(listed)).not.toContain('whsec_');
});

it('updates, disables, rotates the secret and deletes', async () => {
  const { endpoint, secret } = await create();
  const id = endpoint!.id;
  const patched = await hooks.api.updateEndpoint({
    account_id: account,
    id,
    events: ['*'],
    enabled: false,
    description: 'all events',
  });
  expect(patched).toMatchObject({ events: ['*'], enabled: false, description: 'all events' });
  const rotated = await hooks.api.rotateSecret({ account_id: account, id });
  expect(rotated.secret).toMatch(/^whsec_/);
  expect(rotated.secret).not.toBe(secret);
  await hooks.api.deleteEndpoint({ account_id: account, id });
  expect(await refusal(hooks.api.getEndpoint({ account_id: account, id }))).toMatchObject({ code: 'not_found' });
  expect(await refusal(hooks.api.deleteEndpoint({ account_id: account, id }))).toMatchObject({ code: 'not_found' });
});

it.each([
  [{ events: ['license.exploded'] }, 'events', /valid: .*license\.created/],
  [{ events: [] }, 'events', /at least one event type/],
  [{ events: ['*', 'license.created'] }, 'events', /every event/],
  [{ url: 'ftp://127.0.0.1/hook' }, 'url', /https/],
  [{ url: 'http://169.254.169.254/latest/meta-data' }, 'url', /must point to a public address/],
  [{ url: 'http://10.0.0.1/hook' }, 'url', /must point to a public address/],
  [{ url: 'http://192.168.0.10/hook' }, 'url', /must point to a public address/],
])('refuses %p as invalid, naming the field and the problem', async (over, field, message) => {
  const err = await refusal(create(over));
  expect(err).toBeInstanceOf(AppError);
  expect(err!.code).toBe('invalid_request');
  expect(err!.fieldErrors).toEqual(
    expect.arrayContaining([expect.objectContaining({ field, message: expect.stringMatching(message) })]),
  );
});

describe('started without the development setting for loopback receivers', () => {
  let strict: RunningWebhook;
  beforeAll(async () => {
    strict = await startWebhook({ webhookAllowLoopback: false });
  });
  afterAll(async () => {
    await strict?.stop();
  });

  it('refuses loopback receivers, by address and by a name that resolves to loopback', async () => {
    const ask = (url: string) =>
      refusal(strict.api.createEndpoint({ account_id: newAccount(), url, events: ['*'], description: '' }));
    const byAddress = await ask('http://127.0.0.1:9/hook');
    expect(byAddress).toMatchObject({ code: 'invalid_request' });
    expect(byAddress!.message).toMatch(/^url must point to a public address$/);
    expect(await ask('http://localhost:9/hook')).toMatchObject({ code: 'invalid_request' });
  });
});

it('another account gets not_found for every endpoint operation', async () => {
  const id = (await create()).endpoint!.id;
  const other = newAccount();
  const asOther = {
    getEndpoint: () => hooks.api.getEndpoint({ account_id: other, id }),
    updateEndpoint: () => hooks.api.updateEndpoint({ account_id: other, id, events: [], enabled: false }),
    deleteEndpoint: () => hooks.api.deleteEndpoint({ account_id: other, id }),
    rotateSecret: () => hooks.api.rotateSecret({ account_id: other, id }),
  };
  for (const [method, call] of Object.entries(asOther))
    expect({ method, code: (await refusal(call()))?.code }).toEqual({ method, code: 'not_found' });
  const theirs = await hooks.api.listEndpoints({ account_id: other, page: { limit: 100, starting_after: '' } });
  expect(theirs.data).toEqual([]);
  expect((await hooks.api.getEndpoint({ account_id: account, id })).enabled).toBe(true);
});

it('an account may have a bounded number of endpoints', async () => {
  const mine = newAccount();
  const codes: string[] = [];
  for (let i = 0; i < 21; i++)
    codes.push(
      await create({ url: `${hooks.receiver.url}/cap-${i}`, events: ['webhook.test'] }, mine).then(
        () => 'created',
        (e: AppError) => e.code,
      ),
    );
  expect(codes.slice(0, 20).every((c) => c === 'created')).toBe(true);
  expect(codes[20]).toBe('conflict');
  // A deleted endpoint frees its place for a new one.
  const first = (await hooks.api.listEndpoints({ account_id: mine, page: { limit: 1, starting_after: '' } })).data[0];
  await hooks.api.deleteEndpoint({ account_id: mine, id: first.id });
  await expect(
    create({ url: `${hooks.receiver.url}/cap-again`, events: ['webhook.test'] }, mine),
  ).resolves.toBeTruthy();
  expect(
    await refusal(create({ url: `${hooks.receiver.url}/cap-over`, events: ['webhook.test'] }, mine)),
  ).toMatchObject({ code: 'conflict' });
});

it('the endpoint cap holds when many are created at once', async () => {
  const mine = newAccount();
  const burst = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      create({ url: `${hooks.receiver.url}/burst-${i}`, events: ['webhook.test'] }, mine).then(
        () => 'created',
        (e: AppError) => e.code,
      ),
    ),
  );
  const created = burst.filter((c) => c === 'created').length;
  expect(burst.every((c) => c === 'created' || c === 'conflict')).toBe(true);
  expect(created).toBeGreaterThan(0);
  expect(created).toBeLessThanOrEqual(20);
  const listed = await hooks.api.listEndpoints({ account_id: mine, page: { limit: 100, starting_after: '' } });
  expect(listed.data).toHaveLength(created);
});
