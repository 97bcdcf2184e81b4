import { randomBytes } from 'node:crypto';
import { WEBHOOK_DESCRIPTION_MAX_LENGTH, isOneOf, webhookEventTypes } from '@licensing/proto';
import { AppError } from '@licensing/runtime';

/**
 * After a rotation the previous secret keeps signing beside the new one for 24 hours (as Stripe's
 * rolling secrets may), so receivers can switch without a gap; then only the new one signs.
 */
export const SECRET_OVERLAP_MS = 24 * 3600_000;
/** At most the current secret and the one it replaced are kept: rotating again ends the older one at once. */
export const SECRETS_KEPT = 2;

export function checkEvents(events: string[]): string[] {
  if (!events.length) throw AppError.invalid('events', 'events must list at least one event type, or ["*"] for all');
  if (events.includes('*')) {
    if (events.length > 1) throw AppError.invalid('events', '"*" already means every event; list nothing else with it');
    return ['*'];
  }
  const unknown = events.filter((e) => !isOneOf(webhookEventTypes, e));
  if (unknown.length)
    throw AppError.invalid(
      'events',
      `unknown event type(s) ${unknown.join(', ')}; valid: ${webhookEventTypes.join(', ')}, or "*"`,
    );
  return [...new Set(events)];
}

export function checkDescription(d: string): string {
  if (d.length > WEBHOOK_DESCRIPTION_MAX_LENGTH)
    throw AppError.invalid('description', `description must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters`);
  return d.trim();
}

/** Standard Webhooks secrets: "whsec_" + base64 of 24 random bytes. */
export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export interface StoredSecret {
  sealed: string;
  created_at: Date;
  /** Set when a newer secret replaced this one: it keeps signing until then. */
  expires_at: Date | null;
}

/**
 * The secrets that still sign at `now`, newest first: the current one and the previous one within
 * its overlap. Never more than SECRETS_KEPT, also for an endpoint stored with more (rotated before
 * the older ones were dropped).
 */
export const liveSecrets = (secrets: StoredSecret[], now: Date) =>
  secrets.filter((s) => !s.expires_at || s.expires_at.getTime() > now.getTime()).slice(0, SECRETS_KEPT);

/** An account may have at most `max` endpoints (every event is sent to each: the cap bounds the work one event causes). */
export function endpointCapReached(max: number): never {
  throw new AppError(
    'conflict',
    `this account already has ${max} webhook endpoints, the most it may have; delete one first`,
  );
}
