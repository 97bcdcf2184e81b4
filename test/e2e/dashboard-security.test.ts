import { client } from '../support/stack';
import { ownerEmail, useStack } from '../support/fixture';
import { WebClient } from '../support/web-client';
import { signupToken, waitForMail } from '../support/mailbox';

// Own stack: its failed sign-ins and unknown session cookies spend the throttles of the one client address
// every file signs in from.

const fx = useStack();

describe('sign-up and sign-in', () => {
  it('signs up into a session cookie that is HttpOnly and SameSite, and shows the settings', async () => {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    await web.signUp(ownerEmail());
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
    const owner = await new WebClient(fx.stack.url, fx.stack.topology).signUp(ownerEmail());
    const wrong = await new WebClient(fx.stack.url, fx.stack.topology).signIn(owner.email, 'not the password at all');
    const unknown = await new WebClient(fx.stack.url, fx.stack.topology).signIn(
      ownerEmail(),
      'not the password at all',
    );
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.html).toContain('Wrong e-mail or password.');
    }
    expect(
      (await new WebClient(fx.stack.url, fx.stack.topology).signIn(owner.email.toUpperCase(), owner.password)).status,
    ).toBe(303);
  });

  it.each([
    ['empty', '', 'password is required'],
    ['short', 'short', 'at least 10 characters'],
    ['common', 'password123', 'too easy to guess'],
    ['repetitive', 'aaaaaaaaaaaa', 'too easy to guess'],
  ])('refuses a %s password and creates nothing', async (_kind, password, message) => {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    const addr = ownerEmail();
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
    expect(
      (await new WebClient(fx.stack.url, fx.stack.topology).signIn(addr, password || 'anything-at-all')).status,
    ).toBe(401);
  });

  it('refuses a bad e-mail next to the field', async () => {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
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
    const owner = await new WebClient(fx.stack.url, fx.stack.topology).signUp(ownerEmail());
    const fresh = ownerEmail();
    const attempt = async (addr: string) => {
      const web = new WebClient(fx.stack.url, fx.stack.topology);
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
    const note = await waitForMail(fx.stack.topology, owner.email, 2);
    expect(note.subject).toBe('You already have an account');
    expect(note.text).toContain('/dashboard/signin');
    expect(note.text).not.toContain('/dashboard/signup/confirm');
    expect(signupToken(await waitForMail(fx.stack.topology, fresh))).toHaveLength(43);
    // The owner's password is unchanged: the copycat's does not sign in.
    expect(
      (await new WebClient(fx.stack.url, fx.stack.topology).signIn(owner.email, 'another long passphrase')).status,
    ).toBe(401);
    expect((await new WebClient(fx.stack.url, fx.stack.topology).signIn(owner.email, owner.password)).status).toBe(303);
  });

  it('a sign-up link works once, and a made-up or unconfirmed one creates nothing', async () => {
    const addr = ownerEmail();
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    const form = await web.get('/dashboard/signup');
    await web.post('/dashboard/signup', {
      _csrf: WebClient.csrf(form.html),
      account_name: 'Once Co',
      email: addr,
      password: 'a long enough passphrase',
    });
    // Until the link is used there is no account: the password does not sign in.
    expect((await new WebClient(fx.stack.url, fx.stack.topology).signIn(addr, 'a long enough passphrase')).status).toBe(
      401,
    );
    const token = signupToken(await waitForMail(fx.stack.topology, addr));
    expect((await web.confirmSignUp(token)).status).toBe(303);
    const twice = await new WebClient(fx.stack.url, fx.stack.topology).confirmSignUp(token);
    expect(twice.status).toBe(400);
    expect(twice.html).toContain('expired or was already used');
    const madeUp = await new WebClient(fx.stack.url, fx.stack.topology).confirmSignUp('A'.repeat(43));
    expect(madeUp.status).toBe(400);
    expect((await new WebClient(fx.stack.url, fx.stack.topology).get('/dashboard/signup/confirm')).status).toBe(400);
    // A confirmation without the page's CSRF token is refused.
    const forged = await new WebClient(fx.stack.url, fx.stack.topology).post('/dashboard/signup/confirm', {
      _csrf: 'x',
      token,
    });
    expect(forged.status).toBe(403);
  });

  it('throttles 20 wrong passwords in a row, even when the right one follows', async () => {
    const owner = await new WebClient(fx.stack.url, fx.stack.topology).signUp(ownerEmail());
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push(
        (await new WebClient(fx.stack.url, fx.stack.topology).signIn(owner.email, `wrong guess number ${i}`)).status,
      );
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const right = await new WebClient(fx.stack.url, fx.stack.topology).signIn(owner.email, owner.password);
    expect(right.status).toBe(429);
    expect(right.html).toContain('Too many sign-in attempts');
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('forms and sessions', () => {
  it('refuses form posts without the CSRF token and changes nothing', async () => {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    await web.signUp(ownerEmail());
    const res = await web.post('/dashboard/settings/keys', { name: 'sneaky', scope: 'full' });
    expect(res.status).toBe(403);
    expect(
      (await web.post('/dashboard/settings/keys', { name: 'sneaky', scope: 'full', _csrf: 'forged' })).status,
    ).toBe(403);
    expect((await web.get('/dashboard/settings')).html).not.toContain('sneaky');
    const signin = await new WebClient(fx.stack.url, fx.stack.topology).post('/dashboard/signin', {
      email: 'a@example.com',
      password: 'whatever-it-is',
    });
    expect(signin.status).toBe(403);
  });

  it('a signed-out session cookie no longer works', async () => {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    await web.signUp(ownerEmail());
    const stolen = web.cookies.get('lk_session')!;
    const settings = await web.get('/dashboard/settings');
    const csrf = WebClient.csrf(settings.html);
    expect((await web.post('/dashboard/signout', { _csrf: csrf })).location).toBe('/dashboard/signin');
    expect(web.cookies.has('lk_session')).toBe(false);
    const replay = new WebClient(fx.stack.url, fx.stack.topology);
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
    const alice = new WebClient(fx.stack.url, fx.stack.topology);
    await alice.signUp(ownerEmail());
    const { secret } = await alice.generateKey('alice-server');
    const aliceKeyId = /data-key-id="(key_[^"]+)"/.exec((await alice.get('/dashboard/settings')).html)![1];
    const mallory = new WebClient(fx.stack.url, fx.stack.topology);
    await mallory.signUp(ownerEmail());
    expect((await mallory.get(`/dashboard/settings/keys/${aliceKeyId}/revoke`)).status).toBe(404);
    const csrf = WebClient.csrf((await mallory.get('/dashboard/settings')).html);
    expect(
      (await mallory.post(`/dashboard/settings/keys/${aliceKeyId}/revoke`, { _csrf: csrf, confirm: 'yes' })).status,
    ).toBe(404);
    expect(
      (await mallory.post(`/dashboard/settings/keys/${aliceKeyId}/regenerate`, { _csrf: csrf, confirm: 'yes' })).status,
    ).toBe(404);
    expect((await mallory.get('/dashboard/settings/keys/not-a-key/revoke')).status).toBe(404);
    expect((await client(fx.stack.url, secret)('GET', '/api/v1/products')).status).toBe(200);
  });

  it('refuses a bad key scope or name with a clear message', async () => {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    await web.signUp(ownerEmail());
    const csrf = WebClient.csrf((await web.get('/dashboard/settings')).html);
    const bad = await web.post('/dashboard/settings/keys', { _csrf: csrf, name: 'x', scope: 'admin' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('scope must be one of full, validate');
    expect(
      (await web.post('/dashboard/settings/keys', { _csrf: csrf, name: 'n'.repeat(101), scope: 'full' })).status,
    ).toBe(400);
  });

  it('revoking asks for confirmation first, and records who did it', async () => {
    const web = new WebClient(fx.stack.url, fx.stack.topology);
    const owner = await web.signUp(ownerEmail());
    const { secret } = await web.generateKey('to-revoke');
    const settings = await web.get('/dashboard/settings');
    const keyId = /data-key-id="(key_[^"]+)"/.exec(settings.html)![1];
    const csrf = WebClient.csrf(settings.html);
    const unconfirmed = await web.post(`/dashboard/settings/keys/${keyId}/revoke`, { _csrf: csrf });
    expect(unconfirmed.html).toContain('Revoke API key?');
    expect((await client(fx.stack.url, secret)('GET', '/api/v1/products')).status).toBe(200);
    const done = await web.post(`/dashboard/settings/keys/${keyId}/revoke`, { _csrf: csrf, confirm: 'yes' });
    expect(done.html).toContain('Requests with it now get 401');
    expect(done.html).toMatch(new RegExp(`<strong>${owner.email}</strong> revoked`));
    expect(done.html).toMatch(new RegExp(`<strong>${owner.email}</strong> created`));
  });
});
