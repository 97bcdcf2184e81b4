import { SessionResponse } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { checkPassword } from '../../../services/account/src/domain/password';
import { WebClient } from '../../../test/support/web-client';
import { type FakeOwner, fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// The page an invitation's mailed link opens, over a faked account service: the form (name and
// password), a bad one shown again (the link still works), a used link or a taken address a page that
// says so, and a good one signing the new member in. What the service keeps:
// services/account/test/component/members.test.ts.

const INVITED = 'i'.repeat(43);
const TAKEN = 't'.repeat(43);
let w: WebWithFakeServices;
let member: FakeOwner;
const sessions = new Map<string, FakeOwner>();

beforeAll(async () => {
  member = fakeOwner('invited@example.com');
  const open = new Set([INVITED]);
  w = await startWebWithFakeServices({
    handlers: {
      account: {
        ...sessionHandlers([member], sessions),
        acceptInvitation: ({ token, name, password }) => {
          if (!name.trim()) throw AppError.invalid('name', 'name is required (at most 100 characters)');
          checkPassword(password);
          if (token === TAKEN)
            throw new AppError('conflict', 'invited@example.com already signs in to an account here');
          if (!open.delete(token)) throw AppError.invalid('token', 'this invitation has expired or was already used');
          const fresh = `s${'e'.repeat(42)}`;
          sessions.set(fresh, member);
          return SessionResponse.fromPartial({
            token: fresh,
            csrf_token: 'csrf_x',
            expires_at: new Date(Date.now() + 3_600_000).toISOString(),
            user: member.user,
            account: member.account,
          });
        },
      },
    },
  });
});

afterAll(async () => {
  await w?.stop();
});

async function accept(web: WebClient, token: string, name: string, password: string) {
  const form = await web.get(`/dashboard/invitations/accept?token=${token}`);
  return web.post('/dashboard/invitations/accept', { _csrf: WebClient.csrf(form.html), token, name, password });
}

it('a bad name or password shows the form again; a good one joins and signs in; the link then says it is used', async () => {
  const web = new WebClient(w.url);
  const weak = await accept(web, INVITED, 'Dana', 'short');
  expect(weak.status).toBe(400);
  expect(weak.html).toContain('password must be at least 10 characters');
  expect(weak.html).toContain('value="Dana"');
  const noName = await accept(web, INVITED, ' ', 'a good long passphrase');
  expect([noName.status, noName.html.includes('name is required')]).toEqual([400, true]);
  const joined = await accept(web, INVITED, 'Dana', 'a good long passphrase');
  expect([joined.status, joined.location]).toEqual([303, '/dashboard']);
  expect((await web.get('/dashboard/settings/password')).status).toBe(200); // signed in
  const again = await accept(new WebClient(w.url), INVITED, 'Dana', 'a good long passphrase');
  expect(again.status).toBe(400);
  expect(again.html).toContain('expired or was already used');
  expect(again.html).not.toContain('name="password"');
});

it('an address that signs in elsewhere is 409 with a way on; an incomplete link 400; a form without its cookie 403', async () => {
  const taken = await accept(new WebClient(w.url), TAKEN, 'Dana', 'a good long passphrase');
  expect(taken.status).toBe(409);
  expect(taken.html).toContain('already signs in');
  expect((await new WebClient(w.url).get('/dashboard/invitations/accept')).status).toBe(400);
  const forged = await new WebClient(w.url).post('/dashboard/invitations/accept', {
    _csrf: 'x',
    token: INVITED,
    name: 'Dana',
    password: 'a good long passphrase',
  });
  expect(forged.status).toBe(403);
});
