import { AuditEvent, Member } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { WebClient } from '../../../test/support/web-client';
import { fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// The Members and Audit pages over a faked account service: an admin invites (with the roles up to
// theirs), changes a role, sends an invitation again and removes, each passing their own role on; the
// Audit page passes its filters on and shows a refused filter on the page; a developer sees neither
// page nor its links. What the service decides: services/account/test/component/members.test.ts.

let w: WebWithFakeServices;
const admin = { ...fakeOwner('admin@example.com'), role: 'admin' };
const developer = { ...fakeOwner('dev@example.com'), role: 'developer' };
const members: Member[] = [];

beforeAll(async () => {
  w = await startWebWithFakeServices({
    handlers: {
      account: {
        ...sessionHandlers([admin, developer]),
        listMembers: () => ({
          data: members.filter((m) => m.status !== 'removed'),
          page: { has_more: false, next_cursor: '' },
        }),
        inviteMember: (req) => {
          const known = members.find((m) => m.email === req.email);
          if (known && !req.resend) throw new AppError('conflict', `${req.email} is already a member of this account`);
          if (known) return known;
          const m = Member.fromPartial({
            id: newId('mem'),
            email: req.email,
            role: req.role,
            status: 'invited',
            created_at: new Date().toISOString(),
          });
          members.push(m);
          return m;
        },
        getMember: ({ id }) =>
          members.find((m) => m.id === id) ??
          (() => {
            throw AppError.notFound('member');
          })(),
        updateMember: ({ id, role }) => Object.assign(members.find((m) => m.id === id)!, { role }),
        removeMember: ({ id }) => Object.assign(members.find((m) => m.id === id)!, { status: 'removed' }),
        listAuditEvents: (req) => {
          if (req.since === 'yesterday') throw AppError.invalid('since', 'since must be an ISO 8601 time');
          return {
            data: [
              AuditEvent.fromPartial({
                id: newId('aud'),
                at: '2026-05-01T12:00:00.000Z',
                actor: { type: 'member', id: 'user_1', name: 'ops@example.com' },
                event_type: 'license.suspended',
                target: { type: 'license', id: 'lic_1' },
                ip: '203.0.113.7',
              }),
            ],
            page: { has_more: false, next_cursor: '' },
          };
        },
      },
    },
  });
});

afterAll(async () => {
  await w?.stop();
});

it('an admin invites, changes a role, sends again and removes, with their own role passed on', async () => {
  const web = new WebClient(w.url);
  await web.signIn(admin.user.email, admin.password);
  const page = await web.get('/dashboard/members');
  expect(page.status).toBe(200);
  expect(page.html).toContain('href="/dashboard/audit"');
  expect(page.html).not.toContain('<option value="owner"');
  const csrf = WebClient.csrf(page.html);
  const invited = await web.post('/dashboard/members', { _csrf: csrf, email: 'new@example.com', role: 'support' });
  expect(invited.status).toBe(201);
  expect(invited.html).toContain('Invited new@example.com as support.');
  expect(w.fakes.account!.requestsTo('inviteMember').at(-1)).toMatchObject({
    actor: admin.user.email,
    actor_role: 'admin',
    resend: false,
  });
  const id = members[0].id;
  expect(
    (await web.post('/dashboard/members', { _csrf: csrf, email: 'new@example.com', role: 'support' })).status,
  ).toBe(409);
  expect((await web.post(`/dashboard/members/${id}/role`, { _csrf: csrf, role: 'developer' })).html).toContain(
    'is now developer',
  );
  expect((await web.post(`/dashboard/members/${id}/resend`, { _csrf: csrf })).html).toContain('a new invitation link');
  expect(w.fakes.account!.requestsTo('inviteMember').at(-1)).toMatchObject({ resend: true });
  const removed = await web.post(`/dashboard/members/${id}/remove`, { _csrf: csrf });
  expect(removed.html).toContain('Removed new@example.com');
  expect(w.fakes.account!.requestsTo('removeMember').at(-1)).toMatchObject({ id, actor_role: 'admin' });
});

it('the Audit page passes its filters on, and shows a refused one on the page', async () => {
  const web = new WebClient(w.url);
  await web.signIn(admin.user.email, admin.password);
  const page = await web.get('/dashboard/audit?action=license.suspended&target_id=lic_1');
  expect(page.status).toBe(200);
  expect(page.html).toContain('license.suspended');
  expect(page.html).toContain('ops@example.com');
  expect(w.fakes.account!.requestsTo('listAuditEvents').at(-1)).toMatchObject({
    event_type: 'license.suspended',
    target_id: 'lic_1',
  });
  const bad = await web.get('/dashboard/audit?since=yesterday');
  expect(bad.status).toBe(400);
  expect(bad.html).toContain('since must be an ISO 8601 time');
});

it('a developer sees neither page nor its links', async () => {
  const web = new WebClient(w.url);
  await web.signIn(developer.user.email, developer.password);
  const own = await web.get('/dashboard/settings/password');
  expect(own.html).not.toContain('href="/dashboard/audit"');
  expect((await web.get('/dashboard/members')).status).toBe(403);
  expect((await web.get('/dashboard/audit')).status).toBe(403);
  const refused = await web.post('/dashboard/members', {
    _csrf: WebClient.csrf(own.html),
    email: 'x@example.com',
    role: 'read_only',
  });
  expect(refused.status).toBe(403);
});
