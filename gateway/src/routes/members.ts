import type { RequestHandler, Router } from 'express';
import { roleOfScope, type Member } from '@licensing/proto';
import { principalOf, type Principal } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { memberInvite, memberUpdate, ownershipTransfer } from '../request-shapes/operations';
import { checkId, pageJson, pageShape, readBody, toPage } from '../request-shapes/shapes';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

// The people of the account (docs/api.md, "Members"): invited by e-mail with a role no higher than the
// inviting key's, listed, given another role, removed; ownership handed over by the owner alone (an
// API key is never the owner: its call is refused). The account service keeps the rules.

/** REST shape of a member. */
export const memberJson = (m: Member) => ({
  id: m.id,
  email: m.email,
  role: m.role,
  status: m.status,
  name: m.name || null,
  invited_by: m.invited_by,
  created_at: m.created_at,
});

/** Who acts: this API key, with its role (a key made before roles has its scope's). */
const actorOf = (p: Principal) => ({ actor: `api_key:${p.keyId}`, actor_role: p.role ?? roleOfScope(p.scope) });

function inviteMember(clients: Clients): RequestHandler {
  return withBody(memberInvite, async (_req, res, body) => {
    const p = principalOf(res);
    const m = await clients.accounts.inviteMember({
      account_id: p.accountId,
      email: body.email!,
      role: body.role!,
      resend: false,
      ...actorOf(p),
    });
    res.status(201).location(`/api/v1/members/${m.id}`).json(memberJson(m));
  });
}

function listMembers(clients: Clients): RequestHandler {
  return withQuery(pageShape, async (_req, res, query) => {
    const out = await clients.accounts.listMembers({
      account_id: principalOf(res).accountId,
      page: toPage(query, 'mem'),
    });
    res.json(pageJson(out.page!, out.data.map(memberJson)));
  });
}

function getMember(clients: Clients): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'mem', String(req.params.id));
    res.json(
      memberJson(await clients.accounts.getMember({ account_id: principalOf(res).accountId, id, actor_role: '' })),
    );
  };
}

function updateMember(clients: Clients): RequestHandler {
  return withBody(memberUpdate, async (req, res, body) => {
    const p = principalOf(res);
    const id = checkId('id', 'mem', String(req.params.id));
    const m = await clients.accounts.updateMember({
      account_id: p.accountId,
      id,
      role: body.role!,
      actor_role: actorOf(p).actor_role,
    });
    res.json(memberJson(m));
  });
}

function removeMember(clients: Clients): RequestHandler {
  return async (req, res) => {
    readBody(req, {});
    const p = principalOf(res);
    const id = checkId('id', 'mem', String(req.params.id));
    res.json(
      memberJson(
        await clients.accounts.removeMember({ account_id: p.accountId, id, actor_role: actorOf(p).actor_role }),
      ),
    );
  };
}

function transferOwnership(clients: Clients): RequestHandler {
  return withBody(ownershipTransfer, async (_req, res, body) => {
    const p = principalOf(res);
    const member_id = checkId('member_id', 'mem', body.member_id!);
    const m = await clients.accounts.transferOwnership({
      account_id: p.accountId,
      member_id,
      actor_role: actorOf(p).actor_role,
    });
    res.json(memberJson(m));
  });
}

export const memberRouteTable: readonly RouteRow<Clients>[] = [
  { method: 'get', path: '/members', role: 'admin', handler: listMembers },
  { method: 'post', path: '/members', role: 'admin', handler: inviteMember },
  { method: 'post', path: '/members/transfer-ownership', role: 'owner', handler: transferOwnership },
  { method: 'get', path: '/members/:id', role: 'admin', handler: getMember },
  { method: 'patch', path: '/members/:id', role: 'admin', handler: updateMember },
  { method: 'delete', path: '/members/:id', role: 'admin', handler: removeMember },
];

export function memberRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, memberRouteTable, clients);
}
