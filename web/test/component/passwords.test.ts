import { WebClient } from '../../../test/support/web-client';
import { type FakeOwner, fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// The dashboard's password pages over a faked account service (fake-account-answers.ts): asking for a
// reset link (the same answer for any address; 400 for a malformed one; throttled), the link's form (a
// weak password shows the form again, a used link a way to ask again; the new password signs in), and
// changing the password while signed in (the current one required; the other sessions signed out).
// What the service keeps: services/account/test/component/passwords.test.ts.

let w: WebWithFakeServices;
let owner: FakeOwner;
const resets = new Map<string, FakeOwner>();
const RESET_TOKEN = 'r'.repeat(43);

beforeAll(async () => {
  owner = fakeOwner();
  w = await startWebWithFakeServices({
    handlers: { account: sessionHandlers([owner], new Map(), resets) },
    settings: { SIGNUPS_PER_EMAIL: '3', SIGNUPS_PER_ADDRESS: '1000' },
  });
});

afterAll(async () => {
  await w?.stop();
});

async function askForLink(web: WebClient, email: string) {
  const form = await web.get('/dashboard/password/forgot');
  return web.post('/dashboard/password/forgot', { _csrf: WebClient.csrf(form.html), email });
}

describe('a forgotten password', () => {
  it('the sign-in page links to it; any well-formed address is told to check its inbox', async () => {
    const web = new WebClient(w.url);
    expect((await web.get('/dashboard/signin')).html).toContain('href="/dashboard/password/forgot"');
    for (const email of [owner.user.email, 'someone-else@example.com']) {
      const r = await askForLink(web, email);
      expect([r.status, r.location]).toEqual([303, '/dashboard/password/sent']);
    }
    expect((await web.get('/dashboard/password/sent')).html).toContain('If that address signs in here');
    expect(w.fakes.account!.requestsTo('requestPasswordReset').map((r) => r.email)).toEqual([
      owner.user.email,
      'someone-else@example.com',
    ]);
  });

  it('a malformed address is 400 on the form; a form without its CSRF cookie is 403; asking too often is 429', async () => {
    const web = new WebClient(w.url);
    const bad = await askForLink(web, 'not an address');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('email is not an e-mail address');
    const stranger = await new WebClient(w.url).post('/dashboard/password/forgot', { _csrf: 'x', email: 'a@b.c' });
    expect(stranger.status).toBe(403);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await askForLink(web, 'often@example.com')).status);
    expect(statuses).toEqual([303, 303, 303, 429, 429]);
  });

  it("the link's form: a weak password shows it again, a good one signs in; used again, a way to ask again", async () => {
    resets.set(RESET_TOKEN, owner);
    const web = new WebClient(w.url);
    const page = await web.get(`/dashboard/password/reset?token=${RESET_TOKEN}`);
    expect(page.status).toBe(200);
    const csrf = WebClient.csrf(page.html);
    const weak = await web.post('/dashboard/password/reset', { _csrf: csrf, token: RESET_TOKEN, password: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.html).toContain('password must be at least 10 characters');
    const done = await web.post('/dashboard/password/reset', {
      _csrf: WebClient.csrf(weak.html),
      token: RESET_TOKEN,
      password: 'a brand new passphrase',
    });
    expect([done.status, done.location]).toEqual([303, '/dashboard']);
    expect((await web.get('/dashboard/settings/password')).status).toBe(200); // signed in
    const again = await new WebClient(w.url).get(`/dashboard/password/reset?token=${RESET_TOKEN}`);
    const used = await new WebClient(w.url).post('/dashboard/password/reset', {
      _csrf: 'x',
      token: RESET_TOKEN,
      password: 'another passphrase',
    });
    expect(used.status).toBe(403); // no CSRF cookie: refused before the service is asked
    const client = new WebClient(w.url);
    const form = await client.get(`/dashboard/password/reset?token=${RESET_TOKEN}`);
    const spent = await client.post('/dashboard/password/reset', {
      _csrf: WebClient.csrf(form.html),
      token: RESET_TOKEN,
      password: 'another passphrase',
    });
    expect(spent.status).toBe(400);
    expect(spent.html).toContain('href="/dashboard/password/forgot"');
    expect(again.status).toBe(200);
    expect((await new WebClient(w.url).get('/dashboard/password/reset')).status).toBe(400);
  });
});

describe('changing a password', () => {
  it('needs the current one; a new one signs the other sessions out and keeps this one', async () => {
    const me = fakeOwner();
    const sessions = new Map<string, FakeOwner>();
    const own = await startWebWithFakeServices({ handlers: { account: sessionHandlers([me], sessions) } });
    try {
      const here = new WebClient(own.url);
      const elsewhere = new WebClient(own.url);
      expect((await here.signIn(me.user.email, me.password)).status).toBe(303);
      expect((await elsewhere.signIn(me.user.email, me.password)).status).toBe(303);
      const settings = await here.get('/dashboard/settings/password');
      expect(settings.status).toBe(200);
      const wrong = await here.post('/dashboard/settings/password', {
        _csrf: WebClient.csrf(settings.html),
        current_password: 'not my password',
        new_password: 'a brand new passphrase',
      });
      expect(wrong.status).toBe(400);
      expect(wrong.html).toContain('the current password is wrong');
      const changed = await here.post('/dashboard/settings/password', {
        _csrf: WebClient.csrf(wrong.html),
        current_password: me.password,
        new_password: 'a brand new passphrase',
      });
      expect(changed.status).toBe(200);
      expect(changed.html).toContain('Password changed. 1 other session was signed out.');
      expect((await here.get('/dashboard/settings/password')).status).toBe(200);
      expect((await elsewhere.get('/dashboard/settings/password')).status).toBe(303); // to sign-in
      const forged = await here.post('/dashboard/settings/password', {
        _csrf: 'forged',
        current_password: 'a brand new passphrase',
        new_password: 'yet another passphrase',
      });
      expect(forged.status).toBe(403);
    } finally {
      await own.stop();
    }
  });
});

describe('own sessions', () => {
  it('lists where the person is signed in, this one marked, and ends another (a support member too)', async () => {
    const me = { ...fakeOwner(), role: 'support' };
    const own = await startWebWithFakeServices({ handlers: { account: sessionHandlers([me]) } });
    try {
      const here = new WebClient(own.url);
      const elsewhere = new WebClient(own.url);
      await here.signIn(me.user.email, me.password);
      await elsewhere.signIn(me.user.email, me.password);
      const page = await here.get('/dashboard/settings/sessions');
      expect(page.status).toBe(200);
      expect(page.html).toContain('(this one)');
      const other = /action="\/dashboard\/settings\/sessions\/([^/]+)\/end"/.exec(page.html)![1];
      const ended = await here.post(`/dashboard/settings/sessions/${other}/end`, { _csrf: WebClient.csrf(page.html) });
      expect([ended.status, ended.html.includes('That session has ended')]).toEqual([200, true]);
      expect((await elsewhere.get('/dashboard/settings/sessions')).status).toBe(303); // signed out
      const again = await here.post(`/dashboard/settings/sessions/${other}/end`, { _csrf: WebClient.csrf(page.html) });
      expect(again.status).toBe(404);
    } finally {
      await own.stop();
    }
  });
});
