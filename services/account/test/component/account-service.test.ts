import { randomBytes } from 'node:crypto';
import { AccountServiceClient } from '@licensing/proto';
import { createClient, newId } from '@licensing/runtime';
import { start } from '../../src/main';
import { AccountStore } from '../../src/store/queries';
import type { AccountModels } from '../../src/store/models';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { testTopology } from '../../../../test/support/stack';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { eventually } from '../../../../test/support/eventually';
import { stopAndDrop } from '@licensing/test-support';

// The account service alone, over gRPC, against real FerretDB and NATS.
const t = testTopology();
let service: Awaited<ReturnType<typeof start>>;
let accounts: ReturnType<typeof createClient<AccountServiceClient>>;
// Authenticate is the gateway's business: the operator may not call it.
let gateway: ReturnType<typeof createClient<AccountServiceClient>>;
// The dashboard's calls (regenerating a key, the audit trail) are the web component's.
let web: ReturnType<typeof createClient<AccountServiceClient>>;

beforeAll(async () => {
  await setUpEvents(t);
  service = await start({ env: envFor('account', t, { port: 0 }) });
  accounts = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'operator'));
  gateway = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
  web = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'web'));
});

afterAll(async () => {
  accounts?.close();
  gateway?.close();
  web?.close();
  await stopAndDrop('the account service', service);
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

describe('API keys: a cap on live keys, look-ups by id, every page, revoke all, the audit trail by time', () => {
  const MAX = 50;
  const page = (starting_after = '', limit = 100) => ({ limit, starting_after });
  const newAccount = async () => {
    const out = await accounts.call.createAccount({ name: `Keys ${randomBytes(2).toString('hex')}`, plan: 'free' });
    return { accountId: out.account!.id, keyId: out.api_key!.id, secret: out.secret };
  };
  const create = (accountId: string, name = '') =>
    accounts.call.createApiKey({ account_id: accountId, scope: 'full', name });
  /**
   * `n` revoked keys newer than everything before them, written straight to the store in one go (as a
   * long-lived account's history would be; making them one by one over gRPC takes minutes here).
   */
  const churn = async (accountId: string, n: number) => {
    const at = Date.now();
    await service.ctx.db.collection('api_keys').insertMany(
      Array.from({ length: n }, (_, i) => {
        const id = newId('key');
        const when = new Date(at - n + i); // all before now: a revocation made after this is the latest
        return {
          _id: id as never,
          account_id: accountId,
          prefix: 'lk_full_old',
          digest: randomBytes(32).toString('hex'),
          scope: 'full',
          name: `churn ${i}`,
          created_at: when,
          last_used_at: null,
          revoked_at: when,
          created_by: 'operator',
          revoked_by: 'operator',
          slot_key: `freed:${id}`,
        };
      }),
    );
  };
  const live = async (accountId: string) =>
    (await accounts.call.listApiKeys({ account_id: accountId, page: page() })).live_keys;

  it('never lets parallel creations take an account past 50 live keys; past it the answer is a conflict', async () => {
    const { accountId } = await newAccount();
    for (let i = 1; i < 40; i++) await create(accountId, `k${i}`);
    // 20 at once for the last 10 places: the unique slots let at most 10 through.
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => create(accountId, `p${i}`)));
    const created = 40 + results.filter((r) => r.status === 'fulfilled').length - 1;
    expect(created).toBeLessThanOrEqual(MAX - 1);
    for (const r of results)
      if (r.status === 'rejected')
        expect([(r.reason as { code: string }).code, String(r.reason)]).toEqual(['conflict', expect.any(String)]);
    expect(await live(accountId)).toBe(1 + created);
    for (let i = 1 + created; i < MAX; i++) await create(accountId, `fill ${i}`);
    await expect(create(accountId, 'one too many')).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('already has 50 live API keys'),
    });
    const listed = await accounts.call.listApiKeys({ account_id: accountId, page: page() });
    expect(listed).toMatchObject({ live_keys: MAX, max_live_keys: MAX });
    expect(listed.data).toHaveLength(MAX);
    // A revoked key makes room; a full account may still regenerate a key (the dashboard's action).
    await accounts.call.revokeApiKey({ account_id: accountId, key_id: listed.data[0].id });
    await create(accountId, 'in its place');
    await web.call.regenerateApiKey({ account_id: accountId, key_id: listed.data[1].id });
    expect(await live(accountId)).toBe(MAX);
  });

  it('finds a key by id, and pages through every live key, however many revoked keys are newer', async () => {
    const { accountId, keyId } = await newAccount();
    const mine = [keyId];
    for (let i = 0; i < 19; i++) mine.push((await create(accountId, `live ${i}`)).api_key!.id);
    await churn(accountId, 130);
    expect(await accounts.call.getApiKey({ account_id: accountId, key_id: keyId })).toMatchObject({
      id: keyId,
      name: 'default',
      revoked_at: '',
    });
    const other = await newAccount();
    await expect(accounts.call.getApiKey({ account_id: other.accountId, key_id: keyId })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(accounts.call.getApiKey({ account_id: '', key_id: keyId })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const p = await accounts.call.listApiKeys({ account_id: accountId, page: page(cursor, 7) });
      expect(p.data.every((k) => k.revoked_at === '')).toBe(true);
      seen.push(...p.data.map((k) => k.id));
      if (!p.page!.has_more) break;
      cursor = p.page!.next_cursor;
    }
    expect(seen).toEqual([...mine].reverse()); // every live key once, newest first
    const revoked = await accounts.call.listApiKeys({ account_id: accountId, page: page(), revoked: true });
    expect(revoked.data).toHaveLength(100);
    expect(revoked.data.every((k) => k.revoked_at !== '')).toBe(true);
    expect(revoked.page!.has_more).toBe(true);
  });

  it('revokes every live key of an account at once; none of them authenticates afterwards', async () => {
    const { accountId, secret } = await newAccount();
    const secrets = [secret];
    for (let i = 0; i < 10; i++) secrets.push((await create(accountId, `k${i}`)).secret);
    await churn(accountId, 3);
    const other = await newAccount();
    expect(await accounts.call.revokeAllApiKeys({ account_id: accountId, actor: 'ana@example.com' })).toEqual({
      revoked: 11,
    });
    for (const s of secrets)
      await expect(gateway.call.authenticate({ secret: s })).rejects.toMatchObject({ code: 'unauthorized' });
    expect(await live(accountId)).toBe(0);
    expect(await accounts.call.revokeAllApiKeys({ account_id: accountId })).toEqual({ revoked: 0 });
    expect(await gateway.call.authenticate({ secret: other.secret })).toMatchObject({
      account: { id: other.accountId },
    });
    await expect(accounts.call.revokeAllApiKeys({ account_id: '' })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('reads the audit trail by time: an old key revoked now is listed, past 200 newer keys', async () => {
    const { accountId, keyId } = await newAccount();
    await churn(accountId, 201);
    await accounts.call.revokeApiKey({ account_id: accountId, key_id: keyId });
    const { data } = await web.call.listAuditEntries({ account_id: accountId, limit: 10 });
    expect(data).toHaveLength(10);
    expect(data.filter((e) => e.key_id === keyId).map((e) => e.type)).toEqual(['api_key.revoked']);
    expect(data.map((e) => e.at)).toEqual([...data.map((e) => e.at)].sort().reverse());
  });

  it('gives keys stored before the cap a slot at start-up: a live one counts toward it, a revoked one does not', async () => {
    const legacy = await newAccount();
    const gone = await newAccount();
    await accounts.call.revokeApiKey({ account_id: gone.accountId, key_id: gone.keyId });
    const keys = service.ctx.db.collection('api_keys');
    for (const id of [legacy.keyId, gone.keyId])
      await keys.updateOne({ _id: id as never }, { $unset: { slot_key: '' } });
    const store = new AccountStore(service.ctx.db.models as unknown as AccountModels);
    expect(await store.backfillKeySlots()).toBe(2);
    expect(await store.backfillKeySlots()).toBe(0);
    expect((await keys.findOne({ _id: legacy.keyId as never }))?.slot_key).toBe(`legacy:${legacy.keyId}`);
    expect((await keys.findOne({ _id: gone.keyId as never }))?.slot_key).toBe(`freed:${gone.keyId}`);
    expect(await gateway.call.authenticate({ secret: legacy.secret })).toMatchObject({ key_id: legacy.keyId });
    for (let i = 1; i < MAX; i++) await create(legacy.accountId, `k${i}`);
    await expect(create(legacy.accountId)).rejects.toMatchObject({ code: 'conflict' });
    await accounts.call.revokeApiKey({ account_id: legacy.accountId, key_id: legacy.keyId });
    expect((await keys.findOne({ _id: legacy.keyId as never }))?.slot_key).toBe(`freed:${legacy.keyId}`);
    await create(legacy.accountId, 'in its place');
  });
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
