import { AppError, idFloor, idFor } from '@licensing/runtime';
import type { Actor, DomainEvent, EventData, EventType } from '@licensing/proto';

// The audit log is made from the events: each event is one entry, saying what changed (its type, the
// action), what it changed (the target), who asked (the request's origin on the event; none: the
// system) and from where. Its id is a function of the event's, so an event delivered twice is one
// entry, and its time part is the event's time, so the ids sort entries by time (since/until and the
// retention job are ranges of ids).

export const AUDIT_ID_PREFIX = 'aud';

/** What the system's own changes (a payment, a renewal, a sweep) name as their actor. */
export const SYSTEM_ACTOR: Actor = { type: 'system', id: 'system', name: 'system' };

export interface AuditTargetOf {
  type: string;
  id: string;
}

/** The thing an event is about: its family's object, by id (an erasure names its placeholder, never the e-mail). */
export function targetOf(event: DomainEvent): AuditTargetOf {
  const data = event.data as Partial<EventData[EventType]> & Record<string, unknown>;
  const pick = (type: string, o: unknown) => ({ type, id: String((o as { id?: unknown } | undefined)?.id ?? '') });
  switch (event.type) {
    case 'account.updated':
      return pick('account', data.account);
    case 'product.created':
    case 'product.updated':
    case 'product.archived' as string:
    case 'product.unarchived' as string:
    case 'product.deleted' as string:
      return pick('product', data.product);
    case 'release.published':
    case 'release.yanked':
      return pick('release', data.release);
    case 'license.batch_completed':
      return pick('license_batch', data.batch);
    case 'checkout.created':
    case 'checkout.completed':
    case 'checkout.expired':
      return pick('checkout', data.checkout);
    case 'webhook.disabled':
      return pick('webhook', data.endpoint);
    case 'api_key.created':
    case 'api_key.revoked':
      return pick('api_key', data.api_key);
    case 'customer.erased':
      return { type: 'customer', id: String(data.placeholder ?? '') };
    case 'password.changed' as string:
    case 'password.reset' as string:
    case 'session.signed_in' as string:
    case 'session.sign_in_failed' as string:
    case 'mfa.enabled' as string:
    case 'mfa.disabled' as string:
      return pick('user', data.user);
    case 'settings.updated' as string:
      return { type: 'account', id: event.account_id };
    case 'member.invited' as string:
    case 'member.joined' as string:
    case 'member.role_changed' as string:
    case 'member.removed' as string:
    case 'member.ownership_transferred' as string:
      return pick('member', data.member);
    case 'import.created' as string:
      return pick('import', data.import);
    case 'export.created' as string:
      return pick('export', data.export);
    default:
      if (event.type.startsWith('license.')) return pick('license', data.license);
      if (event.type.startsWith('subscription.')) return pick('subscription', data.subscription);
      return { type: event.type.slice(0, event.type.indexOf('.')), id: '' };
  }
}

/** One entry of the log, as stored. */
export interface AuditEntryFields {
  _id: string;
  account_id: string;
  at: Date;
  actor: Actor;
  action: string;
  target: AuditTargetOf;
  request_id?: string;
  ip?: string;
  user_agent?: string;
}

/** The entry an event makes (its actor's name may be filled in later from what the service knows). */
export function auditEntryOf(event: DomainEvent): AuditEntryFields {
  const at = new Date(event.created_at);
  const origin = event.origin;
  return {
    _id: idFor(AUDIT_ID_PREFIX, at.getTime(), event.id),
    account_id: event.account_id,
    at,
    actor: origin?.actor ?? SYSTEM_ACTOR,
    action: event.type,
    target: targetOf(event),
    ...(event.request_id ? { request_id: event.request_id } : {}),
    ...(origin?.ip ? { ip: origin.ip } : {}),
    ...(origin?.user_agent ? { user_agent: origin.user_agent } : {}),
  };
}

/** The filters of a listing, checked. */
export interface AuditFilter {
  actor_id?: string;
  action?: string;
  target_id?: string;
  /** Bounds on ids: at or after since (gte), before until (lt). */
  idFrom?: string;
  idBefore?: string;
}

const MAX_FILTER_LENGTH = 200;

function timeOf(field: 'since' | 'until', value: string): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms))
    throw new AppError('invalid_request', `${field} must be an ISO 8601 time`, [
      { field, message: 'must be an ISO 8601 time, e.g. 2026-01-31T00:00:00Z' },
    ]);
  return ms;
}

/** The listing's filters from the request: bounded text, times that parse, an until after since. */
export function auditFilter(req: {
  actor_id?: string;
  action?: string;
  target_id?: string;
  since?: string;
  until?: string;
}): AuditFilter {
  for (const field of ['actor_id', 'action', 'target_id'] as const) {
    if ((req[field] ?? '').length > MAX_FILTER_LENGTH)
      throw new AppError('invalid_request', `${field} is too long`, [
        { field, message: `must be at most ${MAX_FILTER_LENGTH} characters` },
      ]);
  }
  const since = timeOf('since', req.since ?? '');
  const until = timeOf('until', req.until ?? '');
  if (since !== undefined && until !== undefined && until <= since)
    throw new AppError('invalid_request', 'until must be after since', [
      { field: 'until', message: 'must be after since' },
    ]);
  return {
    ...(req.actor_id ? { actor_id: req.actor_id } : {}),
    ...(req.action ? { action: req.action } : {}),
    ...(req.target_id ? { target_id: req.target_id } : {}),
    ...(since !== undefined ? { idFrom: idFloor(AUDIT_ID_PREFIX, since) } : {}),
    ...(until !== undefined ? { idBefore: idFloor(AUDIT_ID_PREFIX, until) } : {}),
  };
}

/** The oldest time kept when entries are kept `days` days: every entry before it is removed. */
export const retentionBound = (now: Date, days: number): Date => new Date(now.getTime() - days * 86_400_000);
