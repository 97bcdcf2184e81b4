import { randomBytes } from 'node:crypto';
import { client, startStack, type Stack } from '../support/stack';
import { WebClient } from '../support/web-client';
import { eventually } from '../support/eventually';
import { signupToken, waitForMail } from '../support/mailbox';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

const email = () => `owner-${randomBytes(4).toString('hex')}@example.com`;

async function generateKey(web: WebClient, name = 'server', scope = 'full') {
  const settings = await web.get('/dashboard/settings');
  const res = await web.post('/dashboard/settings/keys', { _csrf: WebClient.csrf(settings.html), name, scope });
  const secret = /data-testid="new-key">([^<]+)</.exec(res.html)?.[1];
  return { res, secret };
}

describe('sign-up and sign-in', () => {
  it('signs up into a session cookie that is HttpOnly and SameSite, and shows the settings', async () => {
    const web = new WebClient(stack.url, stack.topology);
    await web.signUp(email());
    const cookie = web.setCookieHeaders.find((c) => c.startsWith('lk_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/dashboard/);
    expect(cookie).not.toMatch(/Secure/); // test mode serves plain HTTP on loopback
    const settings = await web.get('/dashboard/settings');
    expect(settings.status).toBe(200);
    expect(settings.html).toContain('free</span> plan');
    expect(settings.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(settings.headers.get('cache-control')).toBe('no-store');
  });

  it('answers a wrong password and an unknown e-mail with the same generic error', async () => {
    const owner = await new WebClient(stack.url, stack.topology).signUp(email());
    const wrong = await new WebClient(stack.url, stack.topology).signIn(owner.email, 'not the password at all');
    const unknown = await new WebClient(stack.url, stack.topology).signIn(email(), 'not the password at all');
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.html).toContain('Wrong e-mail or password.');
    }
    expect(
      (await new WebClient(stack.url, stack.topology).signIn(owner.email.toUpperCase(), owner.password)).status,
    ).toBe(303);
  });

  it.each([
    ['empty', '', 'password is required'],
    ['short', 'short', 'at least 10 characters'],
    ['common', 'password123', 'too easy to guess'],
    ['repetitive', 'aaaaaaaaaaaa', 'too easy to guess'],
  ])('refuses a %s password and creates nothing', async (_kind, password, message) => {
    const web = new WebClient(stack.url, stack.topology);
    const addr = email();
    const form = await web.get('/dashboard/signup');
    const res = await web.post('/dashboard/signup', {
      _csrf: WebClient.csrf(form.html),
      account_name: 'Weak Co',
      email: addr,
      password,
    });
    expect(res.status).toBe(400);
    expect(res.html).toContain(message);
    expect(web.cookies.has('lk_session')).toBe(false);
    expect((await new WebClient(stack.url, stack.topology).signIn(addr, password || 'anything-at-all')).status).toBe(
      401,
    );
  });

  it('refuses a bad e-mail next to the field', async () => {
    const web = new WebClient(stack.url, stack.topology);
    const form = await web.get('/dashboard/signup');
    const bad = await web.post('/dashboard/signup', {
      _csrf: WebClient.csrf(form.html),
      account_name: 'X',
      email: 'not-an-email',
      password: 'a long enough passphrase',
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('email must be a valid e-mail address');
  });

  it('answers a registered e-mail exactly as a new one: only the inbox learns which it was', async () => {
    const owner = await new WebClient(stack.url, stack.topology).signUp(email());
    const fresh = email();
    const attempt = async (addr: string) => {
      const web = new WebClient(stack.url, stack.topology);
      const form = await web.get('/dashboard/signup');
      const res = await web.post('/dashboard/signup', {
        _csrf: WebClient.csrf(form.html),
        account_name: 'Copycat',
        email: addr,
        password: 'another long passphrase',
      });
      const sent = await web.get(res.location ?? '');
      return {
        status: res.status,
        location: res.location,
        cookies: [...web.cookies.keys()].sort(),
        page: sent.html.replace(/name="_csrf" value="[^"]+"/g, ''),
      };
    };
    const [registered, unregistered] = [await attempt(owner.email.toUpperCase()), await attempt(fresh)];
    expect(registered).toEqual(unregistered);
    expect(registered).toMatchObject({ status: 303, location: '/dashboard/signup/sent' });
    expect(registered.cookies).not.toContain('lk_session');

    // The owner is told to sign in (no link that could make a second account); the new address gets its link.
    const note = await waitForMail(stack.topology, owner.email, 2);
    expect(note.subject).toBe('You already have an account');
    expect(note.text).toContain('/dashboard/signin');
    expect(note.text).not.toContain('/dashboard/signup/confirm');
    expect(signupToken(await waitForMail(stack.topology, fresh))).toHaveLength(43);
    // The owner's password is unchanged: the copycat's does not sign in.
    expect((await new WebClient(stack.url, stack.topology).signIn(owner.email, 'another long passphrase')).status).toBe(
      401,
    );
    expect((await new WebClient(stack.url, stack.topology).signIn(owner.email, owner.password)).status).toBe(303);
  });

  it('a sign-up link works once, and a made-up or unconfirmed one creates nothing', async () => {
    const addr = email();
    const web = new WebClient(stack.url, stack.topology);
    const form = await web.get('/dashboard/signup');
    await web.post('/dashboard/signup', {
      _csrf: WebClient.csrf(form.html),
      account_name: 'Once Co',
      email: addr,
      password: 'a long enough passphrase',
    });
    // Until the link is used there is no account: the password does not sign in.
    expect((await new WebClient(stack.url, stack.topology).signIn(addr, 'a long enough passphrase')).status).toBe(401);
    const token = signupToken(await waitForMail(stack.topology, addr));
    expect((await web.confirmSignUp(token)).status).toBe(303);
    const twice = await new WebClient(stack.url, stack.topology).confirmSignUp(token);
    expect(twice.status).toBe(400);
    expect(twice.html).toContain('expired or was already used');
    const madeUp = await new WebClient(stack.url, stack.topology).confirmSignUp('A'.repeat(43));
    expect(madeUp.status).toBe(400);
    expect((await new WebClient(stack.url, stack.topology).get('/dashboard/signup/confirm')).status).toBe(400);
    // A confirmation without the page's CSRF token is refused.
    const forged = await new WebClient(stack.url, stack.topology).post('/dashboard/signup/confirm', {
      _csrf: 'x',
      token,
    });
    expect(forged.status).toBe(403);
  });

  it('throttles 20 wrong passwords in a row, even when the right one follows', async () => {
    const owner = await new WebClient(stack.url, stack.topology).signUp(email());
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push(
        (await new WebClient(stack.url, stack.topology).signIn(owner.email, `wrong guess number ${i}`)).status,
      );
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const right = await new WebClient(stack.url, stack.topology).signIn(owner.email, owner.password);
    expect(right.status).toBe(429);
    expect(right.html).toContain('Too many sign-in attempts');
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('forms and sessions', () => {
  it('refuses form posts without the CSRF token and changes nothing', async () => {
    const web = new WebClient(stack.url, stack.topology);
    await web.signUp(email());
    const res = await web.post('/dashboard/settings/keys', { name: 'sneaky', scope: 'full' });
    expect(res.status).toBe(403);
    expect(
      (await web.post('/dashboard/settings/keys', { name: 'sneaky', scope: 'full', _csrf: 'forged' })).status,
    ).toBe(403);
    expect((await web.get('/dashboard/settings')).html).not.toContain('sneaky');
    const signin = await new WebClient(stack.url, stack.topology).post('/dashboard/signin', {
      email: 'a@example.com',
      password: 'whatever-it-is',
    });
    expect(signin.status).toBe(403);
  });

  it('a signed-out session cookie no longer works', async () => {
    const web = new WebClient(stack.url, stack.topology);
    await web.signUp(email());
    const stolen = web.cookies.get('lk_session')!;
    const settings = await web.get('/dashboard/settings');
    const csrf = WebClient.csrf(settings.html);
    expect((await web.post('/dashboard/signout', { _csrf: csrf })).location).toBe('/dashboard/signin');
    expect(web.cookies.has('lk_session')).toBe(false);
    const replay = new WebClient(stack.url, stack.topology);
    replay.cookies.set('lk_session', stolen);
    const page = await replay.get('/dashboard/settings');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/dashboard/signin');
    const post = await replay.post('/dashboard/settings/keys', { _csrf: csrf, name: 'after-signout', scope: 'full' });
    expect(post.location).toBe('/dashboard/signin');
    replay.cookies.set('lk_session', 'garbage');
    expect((await replay.get('/dashboard')).location).toBe('/dashboard/signin');
  });

  it('another account’s key id is not found (404) and its key keeps working', async () => {
    const alice = new WebClient(stack.url, stack.topology);
    await alice.signUp(email());
    const { secret } = await generateKey(alice, 'alice-server');
    const aliceKeyId = /data-key-id="(key_[^"]+)"/.exec((await alice.get('/dashboard/settings')).html)![1];
    const mallory = new WebClient(stack.url, stack.topology);
    await mallory.signUp(email());
    expect((await mallory.get(`/dashboard/settings/keys/${aliceKeyId}/revoke`)).status).toBe(404);
    const csrf = WebClient.csrf((await mallory.get('/dashboard/settings')).html);
    expect(
      (await mallory.post(`/dashboard/settings/keys/${aliceKeyId}/revoke`, { _csrf: csrf, confirm: 'yes' })).status,
    ).toBe(404);
    expect(
      (await mallory.post(`/dashboard/settings/keys/${aliceKeyId}/regenerate`, { _csrf: csrf, confirm: 'yes' })).status,
    ).toBe(404);
    expect((await mallory.get('/dashboard/settings/keys/not-a-key/revoke')).status).toBe(404);
    expect((await client(stack.url, secret)('GET', '/api/v1/products')).status).toBe(200);
  });

  it('refuses a bad key scope or name with a clear message', async () => {
    const web = new WebClient(stack.url, stack.topology);
    await web.signUp(email());
    const csrf = WebClient.csrf((await web.get('/dashboard/settings')).html);
    const bad = await web.post('/dashboard/settings/keys', { _csrf: csrf, name: 'x', scope: 'admin' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('scope must be one of full, validate');
    expect(
      (await web.post('/dashboard/settings/keys', { _csrf: csrf, name: 'n'.repeat(101), scope: 'full' })).status,
    ).toBe(400);
  });

  it('revoking asks for confirmation first, and records who did it', async () => {
    const web = new WebClient(stack.url, stack.topology);
    const owner = await web.signUp(email());
    const { secret } = await generateKey(web, 'to-revoke');
    const settings = await web.get('/dashboard/settings');
    const keyId = /data-key-id="(key_[^"]+)"/.exec(settings.html)![1];
    const csrf = WebClient.csrf(settings.html);
    const unconfirmed = await web.post(`/dashboard/settings/keys/${keyId}/revoke`, { _csrf: csrf });
    expect(unconfirmed.html).toContain('Revoke API key?');
    expect((await client(stack.url, secret)('GET', '/api/v1/products')).status).toBe(200);
    const done = await web.post(`/dashboard/settings/keys/${keyId}/revoke`, { _csrf: csrf, confirm: 'yes' });
    expect(done.html).toContain('Requests with it now get 401');
    expect(done.html).toMatch(new RegExp(`<strong>${owner.email}</strong> revoked`));
    expect(done.html).toMatch(new RegExp(`<strong>${owner.email}</strong> created`));
  });
});

describe('metering', () => {
  const validate = (key: string) =>
    client(stack.url, key)('GET', '/api/v1/licenses/validate?license_key=7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V');

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
    const a = new WebClient(stack.url, stack.topology);
    const owner = await a.signUp(email());
    const { secret: fullKey } = await generateKey(a, 'server'); // 2 requests: Settings, then the form
    const { secret: appKey } = await generateKey(a, 'app', 'validate'); // 4
    const csrfA = WebClient.csrf((await a.get('/dashboard/products')).html); // 5
    expect((await createProducts(a, csrfA, 45)).created).toBe(45); // 50
    // A second session of the same account: its own minute, the same hourly quota.
    const b = new WebClient(stack.url, stack.topology);
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
    const api = await client(stack.url, fullKey!)('GET', '/api/v1/products');
    expect(api.status).toBe(429);
    expect(api.body.detail).toMatch(/hourly quota of 100 requests for this account \(free plan\)/);
    // Apps have their own allowance; and signing out is never refused.
    expect((await validate(appKey!)).status).toBe(200);
    expect((await a.post('/dashboard/signout', { _csrf: csrfA })).location).toBe('/dashboard/signin');
  });

  it('each session has a per-minute limit of its own, like an API key', async () => {
    const a = new WebClient(stack.url, stack.topology);
    const owner = await a.signUp(email());
    const settings = await a.get('/dashboard/settings');
    const accountId = /data-testid="account-id">(acct_[^<]+)</.exec(settings.html)![1];
    await stack.admin.updateAccount({ id: accountId, per_hour_limit: 1000 });
    await eventually(async () =>
      expect((await a.get('/dashboard/settings')).html).toContain('data-testid="hourly-quota">1,000<'),
    );
    const b = new WebClient(stack.url, stack.topology);
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
  const apiStatus = async (secret: string) => (await client(stack.url, secret)('GET', '/api/v1/products')).status;
  const refusedWithinASecond = (secret: string) =>
    eventually(async () => expect(await apiStatus(secret)).toBe(401), { timeoutMs: 1500 });
  const keyIds = (html: string) => [...html.matchAll(/data-key-id="(key_[^"]+)"/g)].map((m) => m[1]);

  async function signedUpWithId() {
    const web = new WebClient(stack.url, stack.topology);
    await web.signUp(email());
    const settings = await web.get('/dashboard/settings');
    return { web, accountId: /data-testid="account-id">(acct_[^<]+)</.exec(settings.html)![1] };
  }

  it('a key older than 100 regenerations is still listed, and can be revoked', async () => {
    const { web, accountId } = await signedUpWithId();
    const { secret } = await generateKey(web, 'backdoor');
    const backdoor = keyIds((await web.get('/dashboard/settings')).html)[0];
    for (let i = 0; i < 101; i++) {
      const k = await stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: `rotated ${i}` });
      await stack.admin.revokeApiKey({ account_id: accountId, key_id: k.api_key!.id });
    }
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
  });

  it('pages through live keys, and refuses a key past the cap of 50 with a clear message', async () => {
    const { web, accountId } = await signedUpWithId();
    const live = (await stack.admin.listApiKeys({ account_id: accountId, page: { limit: 100, starting_after: '' } }))
      .live_keys;
    for (let i = live; i < 50; i++)
      await stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: `k${i}` });
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
    const secrets = [(await generateKey(web, 'server')).secret!];
    for (let i = 0; i < 4; i++)
      secrets.push(
        (await stack.admin.createApiKey({ account_id: accountId, scope: i % 2 ? 'full' : 'validate', name: `k${i}` }))
          .secret,
      );
    for (const s of secrets) await client(stack.url, s)('GET', '/api/v1/status'); // in the gateway's auth cache
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
