import { AppError, newId } from '@licensing/runtime';
import { ApiKey, mayGrant, type AccountServiceService } from '@licensing/proto';
import type { FakeHandlers } from '@licensing/test-support';
import { client } from '../../../test/support/stack';
import { expectProblem } from '../../../test/support/problem-json';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// /api/v1/api-keys at the gateway, over an account service faked with what it answers (its keys in
// memory, judged by proto/rules/roles.ts as the real one judges them): the REST shapes (the secret in
// the creation's answer only), the calling key passed on as the actor with its role, 400 for a bad
// body, and the account service's refusals as 403 / 404 problems. What the account service decides:
// services/account/test/component/key-roles.test.ts.

const vendor = fakeVendor('pro');
const developerKey = `lk_full_developer_${vendor.account.id}`;
vendor.roleKeys = { [developerKey]: 'developer' };
const keys: ApiKey[] = [];
let h: GatewayWithFakeServices;

/** CreateApiKey, ListApiKeys and RevokeApiKey over `keys`, with the role rule the account service applies. */
function keyHandlers(): Partial<FakeHandlers<typeof AccountServiceService>> {
  return {
    createApiKey: (req) => {
      if (req.actor_role && !mayGrant(req.actor_role, req.role!))
        throw new AppError('forbidden', `a key of role ${req.actor_role} cannot create a key of role ${req.role}`);
      const key = ApiKey.fromPartial({
        id: newId('key'),
        account_id: req.account_id,
        name: req.name,
        role: req.role,
        scope: req.role === 'validate' ? 'validate' : 'full',
        prefix: 'lk_full_abcd',
        created_at: new Date().toISOString(),
        created_by: req.actor ?? 'operator',
      });
      keys.push(key);
      return { api_key: key, secret: `lk_full_${key.id}` };
    },
    listApiKeys: ({ account_id }) => ({
      data: keys.filter((k) => k.account_id === account_id && !k.revoked_at),
      page: { has_more: false, next_cursor: '' },
      live_keys: keys.length,
      max_live_keys: 50,
    }),
    revokeApiKey: (req) => {
      const key = keys.find((k) => k.id === req.key_id && k.account_id === req.account_id);
      if (!key) throw AppError.notFound('API key');
      if (req.actor_role && !mayGrant(req.actor_role, key.role))
        throw new AppError('forbidden', `a key of role ${req.actor_role} cannot revoke a key of role ${key.role}`);
      Object.assign(key, { revoked_at: new Date().toISOString(), revoked_by: req.actor ?? 'operator' });
      return key;
    },
  };
}

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: { ...accountHandlers([vendor]), ...keyHandlers() } },
  });
});

afterAll(async () => {
  await h?.stop();
});

describe('POST /api/v1/api-keys', () => {
  it('201 with the key shown once, made by the calling key with its role', async () => {
    const made = await client(h.url, vendor.apiKey)('POST', '/api/v1/api-keys', { name: 'CI', role: 'support' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'CI', role: 'support', key: expect.stringMatching(/^lk_full_/) });
    expect(made.body.created_by).toMatch(/^api_key:key_/);
    expect(made.headers.get('location')).toBe(`/api/v1/api-keys/${made.body.id}`);
    expect(h.fakes.account.requestsTo('createApiKey').at(-1)).toMatchObject({
      account_id: vendor.account.id,
      role: 'support',
      actor_role: 'admin',
    });
    const listed = await client(h.url, vendor.apiKey)('GET', '/api/v1/api-keys');
    expect(listed.status).toBe(200);
    const shown = listed.body.data.find((k: { id: string }) => k.id === made.body.id);
    expect(shown).toMatchObject({ name: 'CI', role: 'support', revoked_at: null });
    expect(shown).not.toHaveProperty('key');
  });

  it('a role above the calling key’s is 403 forbidden; a bad body is 400 naming the field', async () => {
    const dev = client(h.url, developerKey);
    expectProblem(await dev('POST', '/api/v1/api-keys', { name: 'Too high', role: 'admin' }), 403, 'forbidden');
    expect((await dev('POST', '/api/v1/api-keys', { name: 'Same', role: 'developer' })).status).toBe(201);
    for (const [body, field] of [
      [{ name: 'x', role: 'superuser' }, 'role'],
      [{ name: 'x' }, 'role'],
      [{ role: 'support' }, 'name'],
      [{ name: 'x'.repeat(101), role: 'support' }, 'name'],
    ] as const) {
      const refused = await dev('POST', '/api/v1/api-keys', body);
      expectProblem(refused, 400, 'invalid_request');
      expect(JSON.stringify(refused.body)).toContain(field);
    }
  });
});

describe('DELETE /api/v1/api-keys/{id}', () => {
  it('revokes a key (200, with revoked_at); a key of a higher role is 403; an unknown one 404; a bad id 400', async () => {
    const api = client(h.url, vendor.apiKey);
    const admin = (await api('POST', '/api/v1/api-keys', { name: 'Admin', role: 'admin' })).body;
    const readOnly = (await api('POST', '/api/v1/api-keys', { name: 'Reader', role: 'read_only' })).body;
    const dev = client(h.url, developerKey);
    expectProblem(await dev('DELETE', `/api/v1/api-keys/${admin.id}`), 403, 'forbidden');
    const revoked = await dev('DELETE', `/api/v1/api-keys/${readOnly.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: readOnly.id, role: 'read_only', revoked_at: expect.any(String) });
    expectProblem(await api('DELETE', `/api/v1/api-keys/${newId('key')}`), 404, 'not_found');
    expectProblem(await api('DELETE', '/api/v1/api-keys/not-a-key'), 400, 'invalid_request');
  });
});
