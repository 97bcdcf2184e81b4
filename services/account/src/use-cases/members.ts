import { INVITATION_RESEND_AFTER_MS, accountLimits, type Member, type PageRequest } from '@licensing/proto';
import { AppError, checkEmail, isId, newId } from '@licensing/runtime';
import {
  INVITATION_TTL_MS,
  checkActorOutranks,
  checkGivenRole,
  checkNotOwner,
  digestInvitationToken,
  invitationMail,
  isInvitationToken,
  memberAction,
  newInvitationToken,
} from '../domain/members';
import { checkPassword, hashPassword } from '../domain/password';
import { personAction } from '../domain/person-action';
import type { MemberDoc, MemberStore } from '../store/members';
import type { PeopleDeps } from './deps';
import { startSession, type OpenedSession } from './sessions';

/** What the members' use cases work with: the people's, and the members. */
export type MemberDeps = PeopleDeps & { members: MemberStore };

/** The owner member of an account its sign-up made (the person whose login `user` is). */
export function ownerMember(user: { _id: string; account_id: string; email: string; created_at: Date }): MemberDoc {
  return {
    _id: newId('mem'),
    account_id: user.account_id,
    email: user.email,
    role: 'owner',
    status: 'active',
    user_id: user._id,
    name: '',
    invited_by: 'sign-up',
    created_at: user.created_at,
    invite_digest: null,
    invite_expires_at: null,
  };
}

const notFound = () => AppError.notFound('member');
const flush = (deps: MemberDeps, id: string) => deps.outbox?.flush(deps.members.Member, id);

export const memberJson = (m: MemberDoc): Member => ({
  id: m._id,
  account_id: m.account_id,
  email: m.email,
  role: m.role,
  status: m.status,
  name: m.name,
  created_at: m.created_at.toISOString(),
  invited_by: m.invited_by,
});

/** A member of the account by id, or not_found (another account's, a removed one, a malformed id). */
async function memberOf(deps: MemberDeps, accountId: string, id: string): Promise<MemberDoc> {
  const m = isId('mem', id) ? await deps.members.byId(accountId, id) : null;
  if (!m || m.status === 'removed') throw notFound();
  return m;
}

/** Invites an address with a role no higher than the inviter's; a mail carries its one-time link. */
export async function inviteMember(
  deps: MemberDeps,
  req: { account_id: string; email: string; role: string; actor?: string; actor_role?: string; resend?: boolean },
  /** The owner of a new account the operator makes (inviteOwner): no request can ask for this role. */
  asOwner = false,
): Promise<MemberDoc> {
  const { members, accounts, mailer, clock, baseUrl } = deps;
  if (!mailer) throw new AppError('forbidden', 'this server sends no e-mail: invitations cannot be delivered');
  const email = checkEmail('email', req.email).toLowerCase();
  const role = asOwner ? 'owner' : checkGivenRole(req.role, req.actor_role || 'owner');
  const account = await accounts.findAccount(req.account_id);
  if (!account) throw AppError.notFound('account');
  const now = clock.now();
  const { token, digest } = newInvitationToken();
  const invitation = { invite_digest: digest, invite_expires_at: new Date(now.getTime() + INVITATION_TTL_MS) };
  const existing = await members.byEmail(account._id, email);
  let member: MemberDoc | null;
  if (existing && existing.status === 'invited' && req.resend) {
    // Sent again: a new link (the old one stops working), the same member; not more than once a minute.
    checkActorOutranks(existing, req.actor_role || 'owner', 'invite again');
    const sentAt = (existing.invite_expires_at?.getTime() ?? 0) - INVITATION_TTL_MS;
    if (now.getTime() - sentAt < INVITATION_RESEND_AFTER_MS)
      throw new AppError(
        'conflict',
        'this invitation was sent less than a minute ago; wait a moment before sending it again',
      );
    member = await members.change(existing, invitation, memberAction('member.invited', existing, now));
  } else if (existing && existing.status !== 'removed')
    throw new AppError('conflict', `${email} is already a member of this account (${existing._id})`);
  else if ((await members.countLive(account._id)) >= accountLimits.members)
    throw new AppError(
      'conflict',
      `an account has at most ${accountLimits.members} members, invited or active: remove one before inviting another`,
    );
  else if (existing) {
    // A removed member invited again: the same record, invited afresh.
    const again = {
      role,
      status: 'invited' as const,
      user_id: null,
      name: '',
      invited_by: req.actor || 'operator',
      ...invitation,
    };
    member = await members.change(existing, again, memberAction('member.invited', { ...existing, role }, now));
  } else {
    member = {
      _id: newId('mem'),
      account_id: account._id,
      email,
      role,
      status: 'invited',
      user_id: null,
      name: '',
      invited_by: req.actor || 'operator',
      created_at: now,
      ...invitation,
    };
    if (!(await members.insert(member, memberAction('member.invited', member, now)))) member = null;
  }
  if (!member) throw new AppError('conflict', `${email} was invited to this account meanwhile`);
  flush(deps, member._id);
  await mailer.send(
    invitationMail(email, account.name, member.role, `${baseUrl}/dashboard/invitations/accept?token=${token}`),
  );
  return member;
}

/** The owner of an account the operator just made, invited by mail: its one owner once they join. */
export const inviteOwner = (deps: MemberDeps, accountId: string, email: string) =>
  inviteMember(deps, { account_id: accountId, email, role: 'owner' }, true);

export const listMembers = (deps: MemberDeps, accountId: string, page: PageRequest | undefined) =>
  deps.members.list(accountId, page);

export const getMember = (deps: MemberDeps, accountId: string, id: string) => memberOf(deps, accountId, id);

/** A new role, within the changer's; never the owner's (hand ownership over instead). */
export async function updateMember(
  deps: MemberDeps,
  req: { account_id: string; id: string; role: string; actor_role?: string },
): Promise<MemberDoc> {
  const actorRole = req.actor_role || 'owner';
  const member = await memberOf(deps, req.account_id, req.id);
  checkNotOwner(member, 'given another role');
  checkActorOutranks(member, actorRole, 'change');
  const role = checkGivenRole(req.role, actorRole);
  if (role === member.role) return member;
  const now = deps.clock.now();
  const changed = await deps.members.change(
    member,
    { role },
    memberAction('member.role_changed', { ...member, role }, now, member.role),
  );
  if (!changed) throw new AppError('conflict', 'the member was changed meanwhile; read it again');
  flush(deps, member._id);
  return changed;
}

/** Removes a member: their sign-in and sessions end at once; the keys they made keep working until revoked. */
export async function removeMember(
  deps: MemberDeps,
  req: { account_id: string; id: string; actor_role?: string },
): Promise<MemberDoc> {
  const member = await memberOf(deps, req.account_id, req.id);
  checkNotOwner(member, 'removed');
  checkActorOutranks(member, req.actor_role || 'owner', 'remove');
  const now = deps.clock.now();
  const removed = await deps.members.change(
    member,
    { status: 'removed', user_id: null, invite_digest: null, invite_expires_at: null },
    memberAction('member.removed', member, now),
  );
  if (!removed) throw new AppError('conflict', 'the member was changed meanwhile; read it again');
  flush(deps, member._id);
  if (member.user_id) {
    await deps.people.endSessionsOf(member.user_id, now);
    await deps.people.deleteUser(member.user_id);
  }
  return removed;
}

/** The owner hands ownership to an active member, and becomes an admin. */
export async function transferOwnership(
  deps: MemberDeps,
  req: { account_id: string; member_id: string; actor_role?: string },
): Promise<MemberDoc> {
  if ((req.actor_role || 'owner') !== 'owner') throw new AppError('forbidden', 'only the owner hands ownership over');
  const target = await memberOf(deps, req.account_id, req.member_id);
  if (target.role === 'owner') return target;
  if (target.status !== 'active')
    throw new AppError('conflict', 'ownership goes to an active member: this one has not accepted the invitation yet');
  const owner = await deps.members.ownerOf(req.account_id);
  const now = deps.clock.now();
  const promoted = await deps.members.change(
    target,
    { role: 'owner' },
    memberAction('member.ownership_transferred', { ...target, role: 'owner' }, now, target.role),
  );
  if (!promoted) throw new AppError('conflict', 'the member was changed meanwhile; read it again');
  if (owner)
    await deps.members.change(
      owner,
      { role: 'admin' },
      memberAction('member.role_changed', { ...owner, role: 'admin' }, now, 'owner'),
    );
  flush(deps, target._id);
  if (owner) flush(deps, owner._id);
  return promoted;
}

/** The invitation's link: a login for the address with the given name and password, signed in. */
export async function acceptInvitation(
  deps: MemberDeps,
  req: { token: string; name: string; password: string },
): Promise<OpenedSession> {
  const { members, people, accounts, clock } = deps;
  const used = new AppError(
    'invalid_request',
    'this invitation has expired or was already used; ask to be invited again',
    [{ field: 'token', message: 'expired or already used' }],
  );
  const name = req.name.trim();
  if (!name || name.length > 100) throw AppError.invalid('name', 'name is required (at most 100 characters)');
  checkPassword(req.password);
  if (!isInvitationToken(req.token)) throw used;
  const member = await members.byInvitation(digestInvitationToken(req.token));
  const now = clock.now();
  const expires = member?.status === 'invited' ? member.invite_expires_at : null;
  if (!member || !expires || expires <= now) throw used;
  const account = await accounts.findAccount(member.account_id);
  if (!account) throw used;
  if (await people.findUserByEmail(member.email))
    throw new AppError(
      'conflict',
      `${member.email} already signs in to an account here; ask to be invited with another address`,
    );
  const user = {
    _id: newId('user'),
    account_id: account._id,
    email: member.email,
    password_hash: await hashPassword(req.password),
    created_at: now,
  };
  const joined = await members.change(
    member,
    { status: 'active', user_id: user._id, name, invite_digest: null, invite_expires_at: null },
    // From no session: the person who joins is the one who acts.
    personAction('member.joined', user, now, { member: { id: member._id, email: member.email, role: member.role } }),
  );
  if (!joined) throw used;
  try {
    await people.insertUser(user);
  } catch (err) {
    // Nothing half-written: the member waits for their link again.
    await members.change(
      joined,
      {
        status: 'invited',
        user_id: null,
        invite_digest: member.invite_digest,
        invite_expires_at: member.invite_expires_at,
      },
      memberAction('member.invited', member, now),
    );
    if ((err as { code?: number })?.code === 11000)
      throw new AppError(
        'conflict',
        `${member.email} already signs in to an account here; ask to be invited with another address`,
      );
    throw err;
  }
  flush(deps, member._id);
  return startSession(deps, user, account);
}
