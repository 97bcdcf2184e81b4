import { AppError, newId } from '@licensing/runtime';
import { Member, mayGrant, type AccountServiceService } from '@licensing/proto';
import type { FakeHandlers } from '@licensing/test-support';
import { client } from '../../../test/support/stack';
import { expectProblem } from '../../../test/support/problem-json';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// /api/v1/members at the gateway, over an account service faked with what it answers (members in
// memory, judged by proto/rules/roles.ts as the real one judges them): the REST shapes, the calling
// key's role passed on (a key made before roles is an admin), 400 for a bad body or id, the service's
// refusals as 403 / 404 / 409 problems, and transfer-ownership refused to every key (none is the owner).
// What the account service decides: services/account/test/component/members.test.ts.

const vendor = fakeVendor('pro');
const supportKey = `lk_full_support_${vendor.account.id}`;
vendor.roleKeys = { [supportKey]: 'support' };
const members: Member[] = [];
let h: GatewayWithFakeServices;

function memberHandlers(): Partial<FakeHandlers<typeof AccountServiceService>> {
  const find = (account: string, id: string) => {
    const m = members.find((x) => x.id === id && x.account_id === account && x.status !== 'removed');
    if (!m) throw AppError.notFound('member');
    return m;
  };
  return {
    inviteMember: (req) => {
      if (!mayGrant(req.actor_role, req.role))
        throw new AppError('forbidden', `a ${req.actor_role} cannot give the role ${req.role}`);
      if (members.some((m) => m.email === req.email && m.account_id === req.account_id))
        throw new AppError('conflict', `${req.email} is already a member of this account`);
      const m = Member.fromPartial({
        id: newId('mem'),
        account_id: req.account_id,
        email: req.email,
        role: req.role,
        status: 'invited',
        invited_by: req.actor,
        created_at: new Date().toISOString(),
      });
      members.push(m);
      return m;
    },
    listMembers: ({ account_id }) => ({
      data: members.filter((m) => m.account_id === account_id && m.status !== 'removed'),
      page: { has_more: false, next_cursor: '' },
    }),
    getMember: ({ account_id, id }) => find(account_id, id),
    updateMember: ({ account_id, id, role, actor_role }) => {
      const m = find(account_id, id);
      if (!mayGrant(actor_role, role)) throw new AppError('forbidden', `a ${actor_role} cannot give the role ${role}`);
      return Object.assign(m, { role });
    },
    removeMember: ({ account_id, id }) => Object.assign(find(account_id, id), { status: 'removed' }),
    transferOwnership: ({ actor_role }) => {
      throw new AppError('forbidden', `only the owner hands ownership over, not a ${actor_role}`);
    },
  };
}

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: { ...accountHandlers([vendor]), ...memberHandlers() } },
  });
});

afterAll(async () => {
  await h?.stop();
});

describe('/api/v1/members', () => {
  it('invites (201, its REST shape, the key as the inviter with its role), lists, reads, changes and removes', async () => {
    const api = client(h.url, vendor.apiKey);
    const made = await api('POST', '/api/v1/members', { email: 'dev@example.com', role: 'developer' });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^mem_/),
      email: 'dev@example.com',
      role: 'developer',
      status: 'invited',
      name: null,
      invited_by: expect.stringMatching(/^api_key:key_/),
      created_at: expect.any(String),
    });
    expect(made.headers.get('location')).toBe(`/api/v1/members/${made.body.id}`);
    // A key made before roles (this fixture's full key) invites as an admin.
    expect(h.fakes.account.requestsTo('inviteMember').at(-1)).toMatchObject({ actor_role: 'admin' });
    expect((await api('GET', '/api/v1/members')).body).toMatchObject({ data: [{ id: made.body.id }], has_more: false });
    expect((await api('GET', `/api/v1/members/${made.body.id}`)).body.email).toBe('dev@example.com');
    expect((await api('PATCH', `/api/v1/members/${made.body.id}`, { role: 'support' })).body.role).toBe('support');
    const removed = await api('DELETE', `/api/v1/members/${made.body.id}`);
    expect([removed.status, removed.body.status]).toEqual([200, 'removed']);
    expectProblem(await api('GET', `/api/v1/members/${made.body.id}`), 404, 'not_found');
  });

  it('answers the service’s refusals: a taken address 409, a role above the key’s 403; transfer-ownership 403 to any key', async () => {
    const api = client(h.url, vendor.apiKey);
    await api('POST', '/api/v1/members', { email: 'twice@example.com', role: 'support' });
    expectProblem(
      await api('POST', '/api/v1/members', { email: 'twice@example.com', role: 'support' }),
      409,
      'conflict',
    );
    const member = (await api('GET', '/api/v1/members')).body.data[0];
    expectProblem(await api('POST', '/api/v1/members/transfer-ownership', { member_id: member.id }), 403, 'forbidden');
    // A support key may not manage members at all (the route needs admin).
    expectProblem(await client(h.url, supportKey)('GET', '/api/v1/members'), 403, 'forbidden');
  });

  it.each([
    ['POST', '/api/v1/members', { email: 'x@example.com', role: 'owner' }, 'role'],
    ['POST', '/api/v1/members', { email: 'x@example.com' }, 'role'],
    ['POST', '/api/v1/members', { role: 'support' }, 'email'],
    ['PATCH', '/api/v1/members/mem_nope', { role: 'support' }, 'id'],
    ['PATCH', `/api/v1/members/${newId('mem')}`, { role: 'root' }, 'role'],
    ['DELETE', '/api/v1/members/not-an-id', undefined, 'id'],
  ])('%s %s with %j is 400 naming %s', async (method, path, body, field) => {
    const r = await client(h.url, vendor.apiKey)(method, path, body);
    expectProblem(r, 400, 'invalid_request');
    expect(JSON.stringify(r.body)).toContain(field);
  });
});
