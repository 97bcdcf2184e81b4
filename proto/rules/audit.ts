import type { AuditEvent } from '../gen/licensing/v1/account';

// An audit log entry as people read it: the API's answer (GET /api/v1/audit-events) and the operator's
// export (npm run admin -- audit-export) are the same JSON, made here once from the gRPC message.

/** Who acted, in the public JSON: a member's e-mail is also their `email`. */
function actorJson(a: AuditEvent['actor']) {
  const type = a?.type ?? 'system';
  const name = a?.name || null;
  return { type, id: a?.id ?? 'system', name, ...(type === 'member' ? { email: name } : {}) };
}

/** The public JSON of an entry: what the service left empty is null. */
export const auditEventJson = (e: AuditEvent) => ({
  id: e.id,
  at: e.at,
  actor: actorJson(e.actor),
  action: e.event_type,
  target: { type: e.target?.type ?? '', id: e.target?.id ?? '' },
  request_id: e.request_id || null,
  ip: e.ip || null,
  user_agent: e.user_agent || null,
});
