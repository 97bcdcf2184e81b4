import type { AccountServiceService } from '@licensing/proto';
import type { Handlers } from '@licensing/runtime';
import {
  acceptInvitation,
  getMember,
  inviteMember,
  listMembers,
  memberJson,
  removeMember,
  transferOwnership,
  updateMember,
  type MemberDeps,
} from '../use-cases/members';
import { toSession } from './people-handlers';

type MemberHandlers = Pick<
  Handlers<typeof AccountServiceService>,
  | 'inviteMember'
  | 'listMembers'
  | 'getMember'
  | 'updateMember'
  | 'removeMember'
  | 'transferOwnership'
  | 'acceptInvitation'
>;

/**
 * The role the change is made with: the one the caller names. The gateway always names its key's; a
 * gateway call naming none is taken at the lowest role (refused), never as the owner's. The web
 * component and the operator CLI act for the account's owner when they name none.
 */
const actorRole = (req: { actor_role?: string }, caller: string) =>
  req.actor_role || (caller === 'gateway' ? 'read_only' : 'owner');

// Proto to use case and back; the rules live in use-cases/members.ts and domain/members.ts.
export function memberHandlers(deps: MemberDeps): MemberHandlers {
  return {
    inviteMember: async (req, { caller }) =>
      memberJson(await inviteMember(deps, { ...req, actor_role: actorRole(req, caller) })),
    async listMembers(req) {
      const { items, page } = await listMembers(deps, req.account_id, req.page);
      return { data: items.map(memberJson), page };
    },
    getMember: async (req) => memberJson(await getMember(deps, req.account_id, req.id)),
    updateMember: async (req, { caller }) =>
      memberJson(await updateMember(deps, { ...req, actor_role: actorRole(req, caller) })),
    removeMember: async (req, { caller }) =>
      memberJson(await removeMember(deps, { ...req, actor_role: actorRole(req, caller) })),
    transferOwnership: async (req, { caller }) =>
      memberJson(await transferOwnership(deps, { ...req, actor_role: actorRole(req, caller) })),
    acceptInvitation: async (req) => toSession(await acceptInvitation(deps, req)),
  };
}
