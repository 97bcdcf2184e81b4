import { accountLimits } from '@licensing/proto';
import { connectMongo, newId, type Logger } from '@licensing/runtime';
import { INVITATION_TTL_MS } from '../../src/domain/members';
import type { Connection } from 'mongoose';
import { eventually } from '../../../../test/support/eventually';
import { signupToken, waitForMail } from '../../../../test/support/mailbox';
import { ownerMembersMigration } from '../../src/jobs/owner-members';
import { type AccountClient, type RunningAccount, startAccount } from './running-account';

// The people of an account as the account service keeps them (real FerretDB, NATS and a mail folder):
// the owner a sign-up makes, invitations mailed and accepted once, roles never given above the giver's,
// the owner's membership changed only by a handover, a removed member signed out for good, one
// account's members invisible to another, each change in the audit log; and the migration that gives
// older accounts their owner. The REST routes: gateway/test/component/member-routes.test.ts.

let svc: RunningAccount;
let web: AccountClient;
let gateway: AccountClient;
let db: Connection;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  svc = await startAccount();
  ({ web, gateway } = svc);
  db = await connectMongo(svc.topology.mongoUrl, `${svc.topology.dbPrefix}_account`);
});

afterAll(async () => {
  await db?.close();
  await svc?.stop();
});

const unique = (what: string) => `${what}-${Math.random().toString(36).slice(2, 10)}@example.com`;
const page = { limit: 100, starting_after: '' };
const invitationToken = (text: string) =>
  /\/dashboard\/invitations\/accept\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '';

/** A signed-up owner: their account and session. */
async function owner() {
  const email = unique('owner');
  await web.call.signUp({ account_name: 'Team Inc', email, password: PASSWORD });
  const session = await web.call.confirmSignUp({ token: signupToken(await waitForMail(svc.topology, email)) });
  return { email, session, accountId: session.account!.id };
}

/** Invites an address (as an admin key would) and accepts the mailed link; the member and their session. */
async function joined(accountId: string, role: string, actorRole = 'admin') {
  const email = unique(role);
  const invited = await gateway.call.inviteMember({
    account_id: accountId,
    email,
    role,
    actor: 'api_key:key_x',
    resend: false,
    actor_role: actorRole,
  });
  const token = invitationToken((await waitForMail(svc.topology, email)).text);
  const session = await web.call.acceptInvitation({ token, name: `A ${role}`, password: PASSWORD });
  return { email, invited, token, session };
}

describe('members', () => {
  it('a sign-up makes its owner an active member', async () => {
    const { email, accountId } = await owner();
    const listed = await gateway.call.listMembers({ account_id: accountId, page });
    expect(listed.data).toEqual([
      expect.objectContaining({
        email,
        role: 'owner',
        status: 'active',
        invited_by: 'sign-up',
        id: expect.stringMatching(/^mem_/),
      }),
    ]);
  });

  it('an invitation is mailed, accepted once with a name and password, and the member is active and signed in', async () => {
    const { accountId } = await owner();
    const { email, invited, token, session } = await joined(accountId, 'developer');
    expect(invited).toMatchObject({
      email,
      role: 'developer',
      status: 'invited',
      invited_by: 'api_key:key_x',
      name: '',
    });
    expect(session.user?.email).toBe(email);
    expect(session.account?.id).toBe(accountId);
    expect(await gateway.call.getMember({ account_id: accountId, id: invited.id, actor_role: '' })).toMatchObject({
      status: 'active',
      name: 'A developer',
    });
    expect((await web.call.signIn({ email, password: PASSWORD })).token).toBeTruthy();
    await expect(web.call.acceptInvitation({ token, name: 'Again', password: PASSWORD })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'token' }],
    });
  });

  it('refuses a role above the inviter’s, an owner, an unknown role, an address already a member, and a gateway call naming no role', async () => {
    const { accountId, email: ownerEmail } = await owner();
    const invite = (email: string, role: string, actor_role: string) =>
      gateway.call.inviteMember({
        account_id: accountId,
        email,
        role,
        actor: 'api_key:key_x',
        resend: false,
        actor_role,
      });
    await expect(invite(unique('x'), 'admin', 'developer')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(invite(unique('x'), 'owner', 'admin')).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'role' }],
    });
    await expect(invite(unique('x'), 'superuser', 'admin')).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(invite('not an address', 'support', 'admin')).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(invite(ownerEmail.toUpperCase(), 'support', 'admin')).rejects.toMatchObject({ code: 'conflict' });
    const twice = unique('twice');
    await invite(twice, 'support', 'developer');
    await expect(invite(twice, 'support', 'admin')).rejects.toMatchObject({ code: 'conflict' });
    await expect(
      gateway.call.inviteMember({
        account_id: accountId,
        email: unique('x'),
        role: 'support',
        actor: 'api_key:key_x',
        resend: false,
        actor_role: '',
      }),
    ).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('a role changes within the changer’s; the owner changes only by a handover, which only the owner makes', async () => {
    const { accountId } = await owner();
    const { invited: dev } = await joined(accountId, 'developer');
    const ownerMember = (await gateway.call.listMembers({ account_id: accountId, page })).data.find(
      (m) => m.role === 'owner',
    )!;
    const update = (id: string, role: string, actor_role: string) =>
      gateway.call.updateMember({ account_id: accountId, id, role, actor_role });
    expect(await update(dev.id, 'support', 'admin')).toMatchObject({ role: 'support' });
    await expect(update(dev.id, 'admin', 'developer')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(update(ownerMember.id, 'admin', 'admin')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(update(dev.id, 'owner', 'admin')).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      gateway.call.removeMember({ account_id: accountId, id: ownerMember.id, actor_role: 'admin' }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(
      gateway.call.transferOwnership({ account_id: accountId, member_id: dev.id, actor_role: 'admin' }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    // The owner (the dashboard names no role: the owner's) hands over.
    expect(
      await web.call.transferOwnership({ account_id: accountId, member_id: dev.id, actor_role: 'owner' }),
    ).toMatchObject({
      role: 'owner',
    });
    const roles = (await gateway.call.listMembers({ account_id: accountId, page })).data.map((m) => [m.id, m.role]);
    expect(roles).toEqual(
      expect.arrayContaining([
        [dev.id, 'owner'],
        [ownerMember.id, 'admin'],
      ]),
    );
    expect(roles.filter(([, r]) => r === 'owner')).toHaveLength(1);
  });

  it('a removed member is signed out at once and cannot sign in; invited again, they join afresh', async () => {
    const { accountId } = await owner();
    const { email, invited, session } = await joined(accountId, 'support');
    const removed = await gateway.call.removeMember({ account_id: accountId, id: invited.id, actor_role: 'admin' });
    expect(removed.status).toBe('removed');
    await expect(web.call.getSession({ token: session.token })).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(web.call.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await gateway.call.listMembers({ account_id: accountId, page })).data.map((m) => m.id)).not.toContain(
      invited.id,
    );
    await expect(
      gateway.call.getMember({ account_id: accountId, id: invited.id, actor_role: '' }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    const again = await gateway.call.inviteMember({
      account_id: accountId,
      email,
      role: 'read_only',
      actor: 'api_key:key_x',
      resend: false,
      actor_role: 'admin',
    });
    expect(again).toMatchObject({ id: invited.id, status: 'invited', role: 'read_only' });
    const token = invitationToken((await waitForMail(svc.topology, email, 2)).text);
    expect((await web.call.acceptInvitation({ token, name: 'Back', password: PASSWORD })).user?.email).toBe(email);
  });

  it('an invitation sent again has a new link; the old one no longer works', async () => {
    const { accountId } = await owner();
    const email = unique('again');
    const invite = (resend: boolean) =>
      gateway.call.inviteMember({
        account_id: accountId,
        email,
        role: 'support',
        actor: 'api_key:key_x',
        actor_role: 'admin',
        resend,
      });
    const first = await invite(false);
    const oldToken = invitationToken((await waitForMail(svc.topology, email)).text);
    // Not twice within a minute (each is a mail to someone outside the account).
    await expect(invite(true)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('less than a minute ago'),
    });
    // A minute later (its sending moved back by one).
    const sentAMinuteAgo = new Date(Date.now() + INVITATION_TTL_MS - 61_000);
    await db
      .collection('members')
      .updateOne({ _id: first.id as never }, { $set: { invite_expires_at: sentAMinuteAgo } });
    expect((await invite(true)).id).toBe(first.id);
    const newToken = invitationToken((await waitForMail(svc.topology, email, 2)).text);
    expect(newToken).not.toBe(oldToken);
    await expect(web.call.acceptInvitation({ token: oldToken, name: 'Old', password: PASSWORD })).rejects.toMatchObject(
      {
        code: 'invalid_request',
      },
    );
    expect((await web.call.acceptInvitation({ token: newToken, name: 'New', password: PASSWORD })).user?.email).toBe(
      email,
    );
    // Joined: sending again is refused as for any member.
    await expect(invite(true)).rejects.toMatchObject({ code: 'conflict' });
  });

  it(`an account has at most ${accountLimits.members} members, invited or active: the next invitation is 409`, async () => {
    const { accountId } = await owner();
    const now = new Date();
    // The owner and 99 more, stored as invitations would be.
    await db.collection('members').insertMany(
      Array.from({ length: accountLimits.members - 1 }, (_, i) => ({
        _id: newId('mem') as never,
        account_id: accountId,
        email: `filler-${i}@example.com`,
        role: 'read_only',
        status: 'invited',
        user_id: null,
        name: '',
        invited_by: 'test',
        created_at: now,
        invite_digest: null,
        invite_expires_at: null,
        schema_version: 1,
      })),
    );
    await expect(
      gateway.call.inviteMember({
        account_id: accountId,
        email: unique('one-more'),
        role: 'support',
        actor: 'api_key:key_x',
        resend: false,
        actor_role: 'admin',
      }),
    ).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining(`at most ${accountLimits.members} members`),
    });
    // Another account is not held up by this one's.
    const other = await owner();
    expect(
      (
        await gateway.call.inviteMember({
          account_id: other.accountId,
          email: unique('fine'),
          role: 'support',
          actor: 'api_key:key_x',
          resend: false,
          actor_role: 'admin',
        })
      ).status,
    ).toBe('invited');
  });

  it('an address that already signs in to an account cannot accept; a made-up link is refused', async () => {
    const first = await owner();
    const { accountId } = await owner();
    await gateway.call.inviteMember({
      account_id: accountId,
      email: first.email,
      role: 'support',
      actor: 'api_key:key_x',
      resend: false,
      actor_role: 'admin',
    });
    const token = invitationToken((await waitForMail(svc.topology, first.email, 2)).text);
    await expect(web.call.acceptInvitation({ token, name: 'Me', password: PASSWORD })).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(
      web.call.acceptInvitation({ token: 'y'.repeat(43), name: 'Me', password: PASSWORD }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(web.call.acceptInvitation({ token, name: '', password: PASSWORD })).rejects.toMatchObject({
      fieldErrors: [{ field: 'name' }],
    });
  });

  it("one account's members are another's not found; every change is in the audit log", async () => {
    const a = await owner();
    const b = await owner();
    const { invited } = await joined(a.accountId, 'developer');
    await expect(
      gateway.call.getMember({ account_id: b.accountId, id: invited.id, actor_role: '' }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(
      gateway.call.removeMember({ account_id: b.accountId, id: invited.id, actor_role: 'admin' }),
    ).rejects.toMatchObject({ code: 'not_found' });
    const actions = await eventually(async () => {
      const found = await gateway.call.listAuditEvents({
        account_id: a.accountId,
        page: { limit: 20, starting_after: '' },
        actor_id: '',
        event_type: '',
        target_id: invited.id,
        since: '',
        until: '',
      });
      expect(found.data.map((e) => e.event_type)).toEqual(['member.joined', 'member.invited']);
      return found.data;
    });
    expect(actions[1].target).toEqual({ type: 'member', id: invited.id });
  });
});

describe('the migration of older accounts', () => {
  it('gives each login without a member its owner member, once', async () => {
    const users = db.collection('users');
    const now = new Date();
    await users.insertOne({
      _id: 'user_01OLDOLDOLDOLDOLDOLDOLDOLD' as never,
      account_id: 'acct_old',
      email: unique('old'),
      password_hash: 'x',
      created_at: now,
    });
    const log = { info: () => undefined } as unknown as Logger;
    const ctx = { db, log, ferretdbPostgresUrl: '', progress: () => undefined };
    await ownerMembersMigration.up(ctx);
    await ownerMembersMigration.up(ctx);
    const made = await db.collection('members').find({ user_id: 'user_01OLDOLDOLDOLDOLDOLDOLDOLD' }).toArray();
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ account_id: 'acct_old', role: 'owner', status: 'active', invited_by: 'sign-up' });
  });
});

describe('an account the operator makes', () => {
  it('with an owner e-mail: its owner is invited by mail and joins as the one owner', async () => {
    const email = `founder-${Math.random().toString(36).slice(2, 10)}@example.com`;
    await expect(
      svc.operator.call.createAccount({ name: 'Operator Made', plan: 'pro', owner_email: 'not an address' }),
    ).rejects.toMatchObject({ code: 'invalid_request', fieldErrors: [{ field: 'owner_email' }] });
    const made = await svc.operator.call.createAccount({ name: 'Operator Made', plan: 'pro', owner_email: email });
    expect(made.owner_member_id).toMatch(/^mem_/);
    const token = invitationToken((await waitForMail(svc.topology, email)).text);
    const session = await web.call.acceptInvitation({ token, name: 'Founder', password: PASSWORD });
    expect(session).toMatchObject({ role: 'owner', account: { id: made.account!.id } });
    const listed = await svc.gateway.call.listMembers({
      account_id: made.account!.id,
      page: { limit: 10, starting_after: '' },
    });
    expect(listed.data.map((m) => [m.email, m.role, m.status])).toEqual([[email, 'owner', 'active']]);
    // Without one, as before: an account and its key, no member.
    const bare = await svc.operator.call.createAccount({ name: 'No Owner Yet', plan: 'free' });
    expect(bare.owner_member_id).toBe('');
  });
});
