import { type AccountActionType, type MemberRole, isMemberRole, mayGrant } from '@licensing/proto';
import { AppError, newEnvelope } from '@licensing/runtime';
import type { Mail } from '../mail/mailer';

// The people of an account and what each may do (proto/rules/roles.ts). Exactly one owner: their
// membership changes only by handing ownership to another member. A role is never given above the
// giver's own. An invitation is a one-time link mailed to the address, valid 7 days.
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** Invitation tokens are made and digested as sign-up's are (signup.ts). */
export {
  digestSignupToken as digestInvitationToken,
  isSignupToken as isInvitationToken,
  newSignupToken as newInvitationToken,
} from './signup';

/** A role a member may be given here (not owner: ownership is handed over), within the giver's. */
export function checkGivenRole(role: string, actorRole: string): MemberRole {
  if (!isMemberRole(role)) throw AppError.invalid('role', 'role must be one of admin, developer, support, read_only');
  if (role === 'owner')
    throw AppError.invalid('role', 'an account has one owner: hand ownership over with transfer-ownership instead');
  if (!mayGrant(actorRole, role))
    throw new AppError('forbidden', `a ${actorRole} cannot give the role ${role}: only roles up to their own`);
  return role;
}

/** Refuses a change of the owner's membership (role, removal) other than a handover. */
export function checkNotOwner(member: { role: string }, what: string): void {
  if (member.role === 'owner')
    throw new AppError(
      'forbidden',
      `the owner cannot be ${what}: the owner first hands ownership to another member (transfer-ownership)`,
    );
}

/** Refuses a change of a member whose role is above the actor's. */
export function checkActorOutranks(member: { role: string }, actorRole: string, what: string): void {
  if (!mayGrant(actorRole, member.role))
    throw new AppError('forbidden', `a ${actorRole} cannot ${what} a member of role ${member.role}`);
}

export function invitationMail(to: string, accountName: string, role: string, link: string): Mail {
  return {
    to,
    subject: `You are invited to ${accountName}`,
    text: [
      `You are invited to join "${accountName}" on the licensing dashboard, as ${role}.`,
      '',
      'To accept, open this link within 7 days and choose your password (it works once):',
      link,
      '',
      'If you did not expect this, ignore this e-mail: nothing happens without the link.',
    ].join('\n'),
  };
}

/** The audit log's record of a change to a member. */
export const memberAction = (
  type: AccountActionType,
  m: { _id: string; account_id: string; email: string; role: string },
  now: Date,
  previousRole?: string,
) =>
  newEnvelope(
    type,
    m.account_id,
    { member: { id: m._id, email: m.email, role: m.role, ...(previousRole ? { previous_role: previousRole } : {}) } },
    now,
  );
