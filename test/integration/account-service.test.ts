import { randomBytes } from 'node:crypto';
import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { start } from '../../services/account/src/main';
import { credentialOf, envFor } from '../../scripts/lib/topology';
import { testTopology } from '../support/stack';
import { setUpEvents } from '../../scripts/lib/events-setup';
import { eventually } from '../support/eventually';

// The account service alone, over gRPC, against real FerretDB and NATS.
const t = testTopology();
let service: Awaited<ReturnType<typeof start>>;
let accounts: ReturnType<typeof createClient<AccountServiceClient>>;
// Authenticate is the gateway's business: the operator may not call it.
let gateway: ReturnType<typeof createClient<AccountServiceClient>>;

beforeAll(async () => {
  await setUpEvents(t);
  service = await start({ env: envFor('account', t, { port: 0 }) });
  accounts = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'operator'));
  gateway = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
});

afterAll(async () => {
  accounts?.close();
  gateway?.close();
  await service?.ctx.db.dropDatabase();
  await service?.stop();
});

it('creates an account with a first full-scope key, stored only as a digest', async () => {
  const out = await accounts.call.createAccount({ name: '  Acme  ', plan: 'pro' });
  expect(out.account).toMatchObject({ name: 'Acme', plan: 'pro', id: expect.stringMatching(/^acct_/) });
  expect(out.secret).toMatch(/^lk_full_/);
  const raw = await service.ctx.db.collection('api_keys').findOne({ account_id: out.account!.id });
  expect(raw).toMatchObject({ prefix: out.secret.slice(0, 12), digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(JSON.stringify(raw)).not.toContain(out.secret.slice(12));
});

it.each([
  [{ name: '', plan: 'free' }, 'name'],
  [{ name: 'x'.repeat(101), plan: 'free' }, 'name'],
  [{ name: 'ok', plan: 'platinum' }, 'plan'],
])('refuses %p', async (req, field) => {
  await expect(accounts.call.createAccount(req)).rejects.toMatchObject({
    code: 'invalid_request',
    fieldErrors: [{ field }],
  });
});

it('authenticates a live key and refuses it once revoked; revoking twice is fine', async () => {
  const { account } = await accounts.call.createAccount({ name: 'Rev', plan: 'free' });
  const { secret, api_key: apiKey } = await accounts.call.createApiKey({
    account_id: account!.id,
    scope: 'validate',
    name: 'app',
  });
  expect(await gateway.call.authenticate({ secret })).toMatchObject({
    key_id: apiKey!.id,
    scope: 'validate',
    account: { id: account!.id },
  });
  await accounts.call.revokeApiKey({ account_id: account!.id, key_id: apiKey!.id });
  await expect(gateway.call.authenticate({ secret })).rejects.toMatchObject({ code: 'unauthorized' });
  const again = await accounts.call.revokeApiKey({ account_id: account!.id, key_id: apiKey!.id });
  expect(again.revoked_at).not.toBe('');
});

it('an account cannot revoke or see another account’s keys', async () => {
  const a = await accounts.call.createAccount({ name: 'A', plan: 'free' });
  const b = await accounts.call.createAccount({ name: 'B', plan: 'free' });
  await expect(accounts.call.revokeApiKey({ account_id: b.account!.id, key_id: a.api_key!.id })).rejects.toMatchObject({
    code: 'not_found',
  });
  const list = await accounts.call.listApiKeys({ account_id: b.account!.id, page: { limit: 100, starting_after: '' } });
  expect(list.data.map((k) => k.id)).toEqual([b.api_key!.id]);
  expect(await gateway.call.authenticate({ secret: a.secret })).toMatchObject({ account: { id: a.account!.id } });
});

it('refuses keys for unknown accounts and bad scopes', async () => {
  await expect(
    accounts.call.createApiKey({ account_id: `acct_${randomBytes(4).toString('hex')}`, scope: 'full', name: '' }),
  ).rejects.toMatchObject({ code: 'not_found' });
  const { account } = await accounts.call.createAccount({ name: 'S', plan: 'free' });
  await expect(accounts.call.createApiKey({ account_id: account!.id, scope: 'admin', name: '' })).rejects.toMatchObject(
    {
      code: 'invalid_request',
    },
  );
});

it('records last_used_at on authentication', async () => {
  const { account, secret, api_key: apiKey } = await accounts.call.createAccount({ name: 'Used', plan: 'free' });
  expect(apiKey!.last_used_at).toBe('');
  await gateway.call.authenticate({ secret });
  await eventually(async () =>
    expect(
      (await accounts.call.listApiKeys({ account_id: account!.id, page: { limit: 10, starting_after: '' } })).data[0]
        .last_used_at,
    ).not.toBe(''),
  );
});

it('is SERVING over the gRPC health protocol, and NOT_SERVING as soon as shutdown begins', async () => {
  const { credentials } = await import('@grpc/grpc-js');
  const { health } = await import('@licensing/proto');
  const other = await start({ env: envFor('account', t, { port: 0 }) });
  const probe = new health.HealthClient(`127.0.0.1:${other.port}`, credentials.createInsecure());
  const check = () =>
    new Promise<string>((resolve, reject) =>
      probe.check({ service: '' }, (err, res) => (err ? reject(err) : resolve(res!.status))),
    );
  // Health checks need no internal credential.
  expect(await check()).toBe(health.HealthCheckResponse_ServingStatus.SERVING);
  const stopping = other.stop();
  expect(other.ctx.grpc.health.isServing).toBe(false);
  await stopping;
  probe.close();
});
