import type { RequestHandler, Router } from 'express';
import type { ApiKey } from '@licensing/proto';
import { principalOf, type Principal } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { checkId, pageShape, toPage, pageJson } from '../request-shapes/shapes';
import { apiKeyCreate } from '../request-shapes/operations';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

// An account's API keys through the API (docs/api.md, "API keys"): made with a role no higher than the
// key that makes it, listed, and revoked. The secret is shown once, in the creation's answer.

/** REST shape of an API key (never its secret). */
export const apiKeyJson = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  role: k.role,
  prefix: k.prefix,
  created_by: k.created_by,
  created_at: k.created_at,
  last_used_at: k.last_used_at || null,
  revoked_at: k.revoked_at || null,
});

/** Who acts, as the account service records it with the key: this API key. */
const actorOf = (p: Principal) => ({ actor: `api_key:${p.keyId}`, actor_role: p.role });

function listApiKeys(clients: Clients): RequestHandler {
  return withQuery(pageShape, async (_req, res, query) => {
    const out = await clients.accounts.listApiKeys({
      account_id: principalOf(res).accountId,
      page: toPage(query, 'key'),
    });
    res.json(pageJson(out.page!, out.data.map(apiKeyJson)));
  });
}

function createApiKey(clients: Clients): RequestHandler {
  return withBody(apiKeyCreate, async (_req, res, body) => {
    const p = principalOf(res);
    const out = await clients.accounts.createApiKey({
      account_id: p.accountId,
      scope: '',
      role: body.role!,
      name: body.name!,
      ...actorOf(p),
    });
    res
      .status(201)
      .location(`/api/v1/api-keys/${out.api_key!.id}`)
      .json({ ...apiKeyJson(out.api_key!), key: out.secret });
  });
}

function revokeApiKey(clients: Clients): RequestHandler {
  return async (req, res) => {
    const p = principalOf(res);
    const key_id = checkId('id', 'key', String(req.params.id));
    res.json(apiKeyJson(await clients.accounts.revokeApiKey({ account_id: p.accountId, key_id, ...actorOf(p) })));
  };
}

export const apiKeyRouteTable: readonly RouteRow<Clients>[] = [
  { method: 'get', path: '/api-keys', role: 'developer', handler: listApiKeys },
  { method: 'post', path: '/api-keys', role: 'developer', handler: createApiKey },
  { method: 'delete', path: '/api-keys/:id', role: 'developer', handler: revokeApiKey },
];

export function apiKeyRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, apiKeyRouteTable, clients);
}
