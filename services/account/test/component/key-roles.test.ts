import { type AccountClient, type RunningAccount, startAccount } from './running-account';

// API keys with roles, as the account service decides them over gRPC (real FerretDB and NATS): the role
// a key is made with and answers to Authenticate, the role a creator may give (never above its own),
// the keys a key may revoke, and keys made before roles (a full key is an admin key). What the gateway
// makes of a role: gateway/test/component/operation-roles.test.ts and api-key-routes.test.ts.

let svc: RunningAccount;
let operator: AccountClient;
let gateway: AccountClient;
let accountId: string;

beforeAll(async () => {
  svc = await startAccount();
  ({ operator, gateway } = svc);
  accountId = (await operator.call.createAccount({ name: 'Roles', plan: 'pro' })).account!.id;
});

afterAll(async () => {
  await svc?.stop();
});

const create = (role: string, actorRole?: string, scope = '') =>
  gateway.call.createApiKey({
    account_id: accountId,
    scope,
    name: `${role} key`,
    role,
    ...(actorRole ? { actor: 'api_key:key_test', actor_role: actorRole } : {}),
  });

describe('a key made with a role', () => {
  it.each(['admin', 'developer', 'support', 'read_only', 'validate'])(
    'is %s in its answer, its listing and Authenticate; its scope follows (validate for an app key)',
    async (role) => {
      const made = await create(role, 'admin');
      const scope = role === 'validate' ? 'validate' : 'full';
      expect(made.api_key).toMatchObject({ role, scope, created_by: 'api_key:key_test' });
      expect(made.secret).toMatch(role === 'validate' ? /^lk_val_/ : /^lk_full_/);
      expect(await gateway.call.authenticate({ secret: made.secret })).toMatchObject({
        role,
        scope,
        key_id: made.api_key!.id,
      });
      const listed = await gateway.call.listApiKeys({
        account_id: accountId,
        page: { limit: 100, starting_after: '' },
      });
      expect(listed.data.find((k) => k.id === made.api_key!.id)?.role).toBe(role);
    },
  );

  it('without a role is its scope’s: a full key is admin, as every key made before roles', async () => {
    const full = await operator.call.createApiKey({ account_id: accountId, scope: 'full', name: 'old style' });
    expect(full.api_key?.role).toBe('admin');
    expect((await gateway.call.authenticate({ secret: full.secret })).role).toBe('admin');
    const app = await operator.call.createApiKey({ account_id: accountId, scope: 'validate', name: 'old app' });
    expect((await gateway.call.authenticate({ secret: app.secret })).role).toBe('validate');
  });
});

describe('what a creator may give and take', () => {
  it('never a role above its own: 403 forbidden naming both, and no key is made', async () => {
    const before = (await gateway.call.listApiKeys({ account_id: accountId, page: { limit: 100, starting_after: '' } }))
      .live_keys;
    for (const [actor, role] of [
      ['developer', 'admin'],
      ['support', 'developer'],
      ['read_only', 'support'],
    ])
      await expect(create(role, actor)).rejects.toMatchObject({
        code: 'forbidden',
        message: `a key of role ${actor} cannot create a key of role ${role}: that role is above its own`,
      });
    const after = (await gateway.call.listApiKeys({ account_id: accountId, page: { limit: 100, starting_after: '' } }))
      .live_keys;
    expect(after).toBe(before);
    expect((await create('developer', 'developer')).api_key?.role).toBe('developer');
    expect((await create('validate', 'support')).api_key?.role).toBe('validate');
  });

  it('revokes only keys of a role it could give; the operator revokes any', async () => {
    const admin = await create('admin', 'admin');
    const support = await create('support', 'admin');
    await expect(
      gateway.call.revokeApiKey({ account_id: accountId, key_id: admin.api_key!.id, actor_role: 'developer' }),
    ).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('cannot revoke a key of role admin'),
    });
    expect((await gateway.call.authenticate({ secret: admin.secret })).role).toBe('admin');
    const revoked = await gateway.call.revokeApiKey({
      account_id: accountId,
      key_id: support.api_key!.id,
      actor: 'api_key:key_dev',
      actor_role: 'developer',
    });
    expect(revoked).toMatchObject({ revoked_by: 'api_key:key_dev', role: 'support' });
    expect(
      (await operator.call.revokeApiKey({ account_id: accountId, key_id: admin.api_key!.id })).revoked_at,
    ).not.toBe('');
  });

  it('refuses an unknown role, and a role that does not go with the scope asked for', async () => {
    await expect(create('superuser', 'admin')).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(create('developer', 'admin', 'validate')).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('a validate-scope key cannot have the role developer'),
    });
    await expect(create('validate', 'admin', 'full')).rejects.toMatchObject({ code: 'invalid_request' });
  });
});
