import type { AuditEntry, AuditEvent, ListAuditEventsRequest, ListAuditEventsResponse } from '@licensing/proto';
import { auditFilter } from '../domain/audit';
import type { AuditEventDoc, AuditStore } from '../store/audit';
import type { PeopleDeps } from './deps';

/**
 * The latest API key creations and revocations of the account, newest first by time (a revocation
 * before its creation), read by time whatever the keys' age: an old key revoked just now comes first.
 */
export async function listAuditEntries(
  { people }: Pick<PeopleDeps, 'people'>,
  accountId: string,
  requestedLimit: number,
): Promise<AuditEntry[]> {
  const limit = Math.min(Math.max(requestedLimit || 10, 1), 100);
  const { created, revoked } = await people.keyActions(accountId, limit);
  const about = (k: (typeof created)[number]) => ({ key_id: k._id, key_prefix: k.prefix, key_name: k.name });
  const entries: AuditEntry[] = [
    ...created.map((k) => ({
      type: 'api_key.created',
      actor: k.created_by,
      at: k.created_at.toISOString(),
      ...about(k),
    })),
    ...revoked.map((k) => ({
      type: 'api_key.revoked',
      actor: k.revoked_by ?? 'operator',
      at: k.revoked_at!.toISOString(),
      ...about(k),
    })),
  ];
  entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.type === 'api_key.revoked' ? -1 : 1));
  return entries.slice(0, limit);
}

/** The audit log's entries of an account, newest first, a page at a time, within the request's filters. */
export async function listAuditEvents(
  audit: Pick<AuditStore, 'list'>,
  req: ListAuditEventsRequest,
): Promise<ListAuditEventsResponse> {
  const { items, page } = await audit.list(req.account_id, auditFilter({ ...req, action: req.event_type }), req.page);
  return { data: items.map(auditEventJson), page };
}

/** The proto shape of an entry (empty strings for what it does not have). */
export const auditEventJson = (d: AuditEventDoc): AuditEvent => ({
  id: d._id,
  at: d.at.toISOString(),
  actor: { type: d.actor.type, id: d.actor.id, name: d.actor.name ?? '' },
  event_type: d.action,
  target: { type: d.target.type, id: d.target.id },
  request_id: d.request_id ?? '',
  ip: d.ip ?? '',
  user_agent: d.user_agent ?? '',
});
