import { newEvent } from '@licensing/runtime';
import {
  effectiveEntitlements,
  effectiveStatus,
  type ActivationData,
  type DeactivationReason,
  type DomainEvent,
  type EventType,
  type LicenseData,
} from '@licensing/proto';
import type { ActivationDoc, LicenseDoc } from '../store/models';

type LicenseEventType = Extract<EventType, `license.${string}`>;

export const licenseData = (doc: Omit<LicenseDoc, 'outbox'>, now: Date): LicenseData => ({
  id: doc._id,
  key: doc.key,
  product_id: doc.product_id,
  customer_email: doc.customer_email,
  status: effectiveStatus(doc, now),
  expires_at: doc.expires_at ? doc.expires_at.toISOString() : null,
  created_at: doc.created_at.toISOString(),
  entitlements: effectiveEntitlements(doc.policy.entitlements, doc.extra_entitlements),
  // Keys replaced by a reroll: every cache of licences evicts them with the licence (their answers follow it).
  ...(doc.retired_keys?.length
    ? { previous_keys: doc.retired_keys.map((r) => ({ key: r.key, valid_until: r.until.toISOString() })) }
    : {}),
});

const activationData = (a: ActivationDoc, licenseKey: string): ActivationData => ({
  id: a._id,
  license_id: a.license_id,
  license_key: licenseKey,
  fingerprint: a.fingerprint,
  name: a.name,
  created_at: a.created_at.toISOString(),
  lease_expires_at: a.lease_expires_at ? a.lease_expires_at.toISOString() : null,
});

/** license.created|updated|suspended|reinstated|revoked|renewed|expired|deleted */
export const licenseEvent = (
  type: Exclude<
    LicenseEventType,
    'license.activated' | 'license.deactivated' | 'license.rerolled' | 'license.batch_completed'
  >,
  doc: Omit<LicenseDoc, 'outbox'>,
  now: Date,
  id?: string,
): DomainEvent => newEvent(type, doc.account_id, { license: licenseData(doc, now) }, now, id);

/**
 * One expiry, one event: the id is derived from the licence and the moment it
 * expired, so sweepers on several instances (or a store that lets two
 * conditional updates through, as FerretDB can) publish the same id, and
 * JetStream keeps one.
 */
export const licenseExpired = (doc: Omit<LicenseDoc, 'outbox'>, now: Date): DomainEvent =>
  licenseEvent('license.expired', doc, now, `evt_expired_${doc._id.slice(4)}_${doc.grace_ends_at?.getTime() ?? 0}`);

/**
 * The revocation of a licence at its expiry (its policy's revoke_access), published with its
 * license.expired: an id derived the same way, so two sweepers publish one.
 */
export const licenseRevokedAtExpiry = (doc: Omit<LicenseDoc, 'outbox'>, now: Date): DomainEvent =>
  licenseEvent('license.revoked', doc, now, `evt_revoked_${doc._id.slice(4)}_${doc.grace_ends_at?.getTime() ?? 0}`);

/** `sendEmail`: the licence mail was asked for (an internal envelope field the notification service reads, never in a webhook's body). */
export const licenseCreated = (doc: Omit<LicenseDoc, 'outbox'>, sendEmail?: boolean): DomainEvent =>
  withMailAsked(licenseEvent('license.created', doc, doc.created_at), sendEmail);

/** The event, asking the notification service for the licence mail when `sendEmail`. */
export const withMailAsked = (event: DomainEvent, sendEmail?: boolean): DomainEvent =>
  sendEmail ? { ...event, send_email: true } : event;

export const activationEvent = (
  type: 'license.activated',
  license: Omit<LicenseDoc, 'outbox'>,
  activation: ActivationDoc,
  now: Date,
): DomainEvent =>
  newEvent(
    type,
    license.account_id,
    { license: licenseData(license, now), activation: activationData(activation, license.key) },
    now,
  );

/** A machine's slot freed: by a DELETE (requested), or a lapsed floating seat reclaimed (lapsed). */
export const deactivationEvent = (
  license: Omit<LicenseDoc, 'outbox'>,
  activation: ActivationDoc,
  reason: DeactivationReason,
  now: Date,
): DomainEvent =>
  newEvent(
    'license.deactivated',
    license.account_id,
    { license: licenseData(license, now), activation: activationData(activation, license.key), reason },
    now,
  );
