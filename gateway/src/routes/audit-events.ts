import type { RequestHandler, Router } from 'express';
import { auditEventJson } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { auditEventList } from '../request-shapes/operations';
import { pageJson, toPage } from '../request-shapes/shapes';
import { registerRouteTable, withQuery, type RouteRow } from './route';

// The account's audit log (docs/api.md, "Audit log"): who changed what, when and from where, newest
// first. Read only: nothing changes or removes an entry through any API.

function listAuditEvents(clients: Clients): RequestHandler {
  return withQuery(auditEventList, async (_req, res, query) => {
    const out = await clients.accounts.listAuditEvents({
      account_id: principalOf(res).accountId,
      page: toPage(query, 'aud'),
      actor_id: query.actor_id ?? '',
      event_type: query.action ?? '',
      target_id: query.target_id ?? '',
      since: query.since ?? '',
      until: query.until ?? '',
    });
    res.json(pageJson(out.page!, out.data.map(auditEventJson)));
  });
}

export const auditEventRouteTable: readonly RouteRow<Clients>[] = [
  { method: 'get', path: '/audit-events', role: 'admin', handler: listAuditEvents },
];

export function auditEventRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, auditEventRouteTable, clients);
}
