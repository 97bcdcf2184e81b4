import type { AuditEvent } from '../gen/licensing/v1/account';

// An audit log entry as people read it: the API's answer (GET /api/v1/audit-events) and the operator's
// export (npm run admin -- audit-export) are the same JSON, made here once from the gRPC message.

/** The public JSON of an entry: what the service left empty is null. */
export const auditEventJson = (e: AuditEvent) => ({
  id: e.id,
  at: e.at,
  actor: { type: e.actor?.type ?? 'system', id: e.actor?.id ?? 'system', name: e.actor?.name || null },
  action: e.event_type,
  target: { type: e.target?.type ?? '', id: e.target?.id ?? '' },
  request_id: e.request_id || null,
  ip: e.ip || null,
  user_agent: e.user_agent || null,
});
