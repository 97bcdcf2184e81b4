import { randomBytes } from 'node:crypto';
import { client, startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';
import { WebClient } from '../support/web-client';
import { expectProblem } from '../support/problem-json';

// What of authentication and errors only the real services show: the account service's judgement of
// a key (its shape and checksum, the server secret it was issued under, its revocation), its listing
// of keys, the services' refusal of a call without the internal credential, and the dashboard's page
// while a service is away. The gateway's side of all of it (problem JSON, 401s, revocation within a
// second, 503 with Retry-After, status, probes, drain) is in gateway/test/component.

let stack: Stack;
let apiKey: string;
let accountId: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  stack = await startStack();
  ({ apiKey, accountId } = await stack.newAccount());
  api = client(stack.url, apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

describe('authentication', () => {
  it('an unknown key of the right shape, and a key with a broken checksum: 401', async () => {
    const other = await stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: 'tmp' });
    // Same shape, different body: fails the checksum before any look-up.
    const mangled = other.secret.slice(0, 10) + (other.secret[10] === 'a' ? 'b' : 'a') + other.secret.slice(11);
    expectProblem(await client(stack.url, mangled)('GET', '/api/v1/products'), 401, 'unauthorized');
    expectProblem(await client(stack.url, 'lk_full_notarealkey')('GET', '/api/v1/products'), 401, 'unauthorized');
    // A well-formed key issued under another server secret is unknown here.
    const foreign = await startStack();
    try {
      const foreignKey = (await foreign.newAccount()).apiKey;
      expectProblem(await client(stack.url, foreignKey)('GET', '/api/v1/products'), 401, 'unauthorized');
    } finally {
      await foreign.stop();
    }
  });

  it('a key revoked through the account service stops working within 1 s, although it was cached', async () => {
    const { secret, api_key: key } = await stack.admin.createApiKey({
      account_id: accountId,
      scope: 'full',
      name: 'to-revoke',
    });
    const doomed = client(stack.url, secret);
    expect((await doomed('GET', '/api/v1/products')).status).toBe(200); // now cached by the gateway
    expect((await doomed('GET', '/api/v1/products')).status).toBe(200);
    const revoked = await stack.admin.revokeApiKey({ account_id: accountId, key_id: key!.id });
    expect(revoked.revoked_at).not.toBe('');
    // Polled for at most 1 s: the promise is "within a second", even with the revocation event late.
    await eventually(async () => expect((await doomed('GET', '/api/v1/products')).status).toBe(401), {
      timeoutMs: 1000,
    });
    expect((await api('GET', '/api/v1/products')).status).toBe(200); // other keys unaffected
  });

  it('lists API keys by prefix only and never returns a secret or digest', async () => {
    const out = await stack.admin.listApiKeys({ account_id: accountId, page: { limit: 100, starting_after: '' } });
    expect(out.data.length).toBeGreaterThan(0);
    for (const k of out.data) {
      expect(k.prefix).toMatch(/^lk_(full|val)_[0-9A-Za-z]{4}$/);
      expect(JSON.stringify(k)).not.toMatch(/lk_(full|val)_[0-9A-Za-z]{20,}/);
    }
  });
});

describe('the internal credential', () => {
  it('the gRPC services refuse calls without the internal credential', async () => {
    const { createClient } = await import('@licensing/runtime');
    const { AccountServiceClient } = await import('@licensing/proto');
    const intruder = createClient(AccountServiceClient, stack.addrs.account, {
      caller: 'gateway',
      token: 'wrong-token',
    });
    await expect(intruder.call.createAccount({ name: 'x', plan: 'free' })).rejects.toMatchObject({
      code: 'unauthorized',
    });
    intruder.close();
  });
});

describe('unavailable services', () => {
  it("the dashboard's page says a service is down with 503 and Retry-After, as the API does", async () => {
    const own = api;
    await own('GET', '/api/v1/products'); // authenticates and caches the key
    const web = new WebClient(stack.url, stack.topology);
    await web.signUp(`owner-${randomBytes(4).toString('hex')}@example.com`);
    await stack.stopService('product');
    try {
      const res = await own('GET', '/api/v1/products');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      const page = await web.get('/dashboard/products');
      expect(page.status).toBe(503);
      expect(page.headers.get('retry-after')).toBe('5');
    } finally {
      await stack.restartService('product');
    }
  });
});
