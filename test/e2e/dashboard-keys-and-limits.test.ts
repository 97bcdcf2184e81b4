import { client } from '../support/stack';
import { ownerEmail } from '../support/fixture';
import { useSharedStack } from '../support/shared-stack';
import { WebClient } from '../support/web-client';
import { eventually } from '../support/eventually';

// The dashboard counted against the account's rate limits like the API, and
// the API keys of Settings: every live key listed and revocable, a cap on them,
// "Revoke all keys". Each test signs up (the shared system's sign-up throttles are lifted).
const fx = useSharedStack();

describe('metering', () => {
  const validate = (key: string) =>
    client(fx.stack.url, key)('GET', '/api/v1/licenses/validate?license_key=7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V');

  /** Posts new products until one is refused (or `max` went through); the count that went through, and the refusal. */
  async function createProducts(web: WebClient, csrf: string, max: number) {
    let created = 0;
    for (let i = 0; i < max; i++) {
      const res = await web.post('/dashboard/products', { _csrf: csrf, name: `Scripted ${i}` });
      if (res.status !== 303) return { created, refused: res };
      created++;
    }
    return { created, refused: undefined };
  }

  it('free plan: dashboard actions spend the account’s hourly quota with the API; past it both refuse, apps still validate', async () => {
    const a = new WebClient(fx.stack.url, fx.stack.topology);
    const owner = await a.signUp(ownerEmail());
    const { secret: fullKey } = await a.generateKey('server'); // 2 requests: Settings, then the form
    const { secret: appKey } = await a.generateKey('app', 'validate'); // 4
    const csrfA = WebClient.csrf((await a.get('/dashboard/products')).html); // 5
    expect((await createProducts(a, csrfA, 45)).created).toBe(45); // 50
    // A second session of the same account: its own minute, the same hourly quota.
    const b = new WebClient(fx.stack.url, fx.stack.topology);
    expect((await b.signIn(owner.email, owner.password)).status).toBe(303);
    const csrfB = WebClient.csrf((await b.get('/dashboard/products')).html); // 51
    const { created, refused } = await createProducts(b, csrfB, 80);
    expect(created).toBe(49); // 100: the free plan's hourly quota
    expect(refused!.status).toBe(429);
    expect(refused!.headers.get('content-type')).toMatch(/^text\/html/);
    expect(refused!.html).toContain('Too many requests');
    expect(refused!.html).toContain('used its 100 requests for this hour (free plan)');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect(refused!.headers.get('ratelimit')).toMatch(/^"hour";r=0;t=\d+$/);
    // Reads are counted too, in every session.
    expect((await a.get('/dashboard/settings')).status).toBe(429);
    // The API's full key spends the same quota.
    const api = await client(fx.stack.url, fullKey!)('GET', '/api/v1/products');
    expect(api.status).toBe(429);
    expect(api.body.detail).toMatch(/hourly quota of 100 requests for this account \(free plan\)/);
    // Apps have their own allowance; and signing out is never refused.
    expect((await validate(appKey!)).status).toBe(200);
    expect((await a.post('/dashboard/signout', { _csrf: csrfA })).location).toBe('/dashboard/signin');
  });

  it('each session has a per-minute limit of its own, like an API key', async () => {
    const a = new WebClient(fx.stack.url, fx.stack.topology);
    const owner = await a.signUp(ownerEmail());
    const settings = await a.get('/dashboard/settings');
    // Each licence's own minute (app traffic that names it) is shown with the plan's limits.
    expect(settings.html).toContain('data-testid="per-license-minute">60<');
    expect((await a.get('/dashboard')).html).toContain('60 requests/minute per licence');
    const accountId = /data-testid="account-id">(acct_[^<]+)</.exec(settings.html)![1];
    await fx.stack.admin.updateAccount({ id: accountId, per_hour_limit: 1000 });
    await eventually(async () =>
      expect((await a.get('/dashboard/settings')).html).toContain('data-testid="hourly-quota">1,000<'),
    );
    const b = new WebClient(fx.stack.url, fx.stack.topology);
    expect((await b.signIn(owner.email, owner.password)).status).toBe(303);
    for (let i = 0; i < 100; i++) expect((await b.get('/dashboard/licenses')).status).toBe(200);
    const refused = await b.get('/dashboard/licenses');
    expect(refused.status).toBe(429);
    expect(refused.html).toContain('This session made more than 100 requests in a minute.');
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // The other session still has room.
    expect((await a.get('/dashboard/licenses')).status).toBe(200);
  });
});

describe('every API key can be found and revoked', () => {
  const apiStatus = async (secret: string) => (await client(fx.stack.url, secret)('GET', '/api/v1/products')).status;
  const refusedWithinASecond = (secret: string) =>
    eventually(async () => expect(await apiStatus(secret)).toBe(401), { timeoutMs: 1500 });
  const keyIds = (html: string) => [...html.matchAll(/data-key-id="(key_[^"]+)"/g)].map((m) => m[1]);

  async function signedUpWithId() {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    await web.signUp(ownerEmail());
    const settings = await web.get('/dashboard/settings');
    return { web, accountId: /data-testid="account-id">(acct_[^<]+)</.exec(settings.html)![1] };
  }

  it('a key older than 100 regenerations is still listed, and can be revoked', async () => {
    const { web, accountId } = await signedUpWithId();
    const { secret } = await web.generateKey('backdoor');
    const backdoor = keyIds((await web.get('/dashboard/settings')).html)[0];
    const rotate = async (i: number) => {
      const k = await fx.stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: `rotated ${i}` });
      await fx.stack.admin.revokeApiKey({ account_id: accountId, key_id: k.api_key!.id });
    };
    // 202 calls: ten at a time (one by one they took over 30 s on a busy machine), the newest last.
    for (let i = 0; i < 100; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => rotate(i + j)));
    await rotate(100);
    const settings = await web.get('/dashboard/settings');
    expect(keyIds(settings.html)).toEqual([backdoor]); // live keys only
    expect(settings.html).toContain('data-testid="live-keys">1<');
    expect(settings.html).toMatch(/revoked <code>lk_full_[^<]+…<\/code> \(rotated 100\)/); // the key actions, newest first
    const confirm = await web.get(`/dashboard/settings/keys/${backdoor}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Revoke API key?');
    const done = await web.post(`/dashboard/settings/keys/${backdoor}/revoke`, {
      _csrf: WebClient.csrf(settings.html),
      confirm: 'yes',
    });
    expect(done.html).toContain('Requests with it now get 401');
    await refusedWithinASecond(secret!);
  }, 90_000);

  it('pages through live keys, and refuses a key past the cap of 50 with a clear message', async () => {
    const { web, accountId } = await signedUpWithId();
    const live = (await fx.stack.admin.listApiKeys({ account_id: accountId, page: { limit: 100, starting_after: '' } }))
      .live_keys;
    for (let i = live; i < 50; i++)
      await fx.stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: `k${i}` });
    const first = await web.get('/dashboard/settings');
    expect(keyIds(first.html)).toHaveLength(25);
    expect(first.html).toContain('data-testid="live-keys">50<');
    const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first.html)![1].replace(/&amp;/g, '&');
    const second = await web.get(next);
    expect(keyIds(second.html)).toHaveLength(25);
    expect(new Set([...keyIds(first.html), ...keyIds(second.html)]).size).toBe(50);
    expect(second.html).not.toContain('rel="next"');
    const refused = await web.post('/dashboard/settings/keys', {
      _csrf: WebClient.csrf(first.html),
      name: 'one too many',
      scope: 'full',
    });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('this account already has 50 live API keys, the most it may have');
    expect(refused.html).not.toContain('data-testid="new-key"');
  });

  it('"Revoke all keys" asks first, needs the form’s token, and stops every key within a second; the session goes on', async () => {
    const { web, accountId } = await signedUpWithId();
    const secrets = [(await web.generateKey('server')).secret!];
    for (let i = 0; i < 4; i++)
      secrets.push(
        (
          await fx.stack.admin.createApiKey({
            account_id: accountId,
            scope: i % 2 ? 'full' : 'validate',
            name: `k${i}`,
          })
        ).secret,
      );
    for (const s of secrets) await client(fx.stack.url, s)('GET', '/api/v1/status'); // in the gateway's auth cache
    const settings = await web.get('/dashboard/settings');
    expect(settings.html).toContain('href="/dashboard/settings/keys/revoke-all"');
    const confirm = await web.get('/dashboard/settings/keys/revoke-all');
    expect(confirm.html).toContain('Revoke all API keys?');
    const csrf = WebClient.csrf(confirm.html);
    expect((await web.post('/dashboard/settings/keys/revoke-all', { confirm: 'yes' })).status).toBe(403);
    expect((await web.post('/dashboard/settings/keys/revoke-all', { _csrf: csrf })).html).toContain(
      'Revoke all API keys?',
    );
    expect(await apiStatus(secrets[0])).toBe(200); // nothing revoked yet
    const done = await web.post('/dashboard/settings/keys/revoke-all', { _csrf: csrf, confirm: 'yes' });
    expect(done.status).toBe(200);
    expect(done.html).toContain(`Revoked ${secrets.length} API keys.`);
    for (const s of secrets) await refusedWithinASecond(s);
    const after = await web.get('/dashboard/settings');
    expect(after.status).toBe(200);
    expect(after.html).toContain('data-testid="live-keys">0<');
  });
});
