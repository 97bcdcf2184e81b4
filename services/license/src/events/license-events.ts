import { newEvent } from '@licensing/runtime';
import type { ActivationData, DomainEvent, EventType, LicenseData } from '@licensing/proto';
import { effectiveStatus } from '../domain/lifecycle';
import type { ActivationDoc, LicenseDoc } from '../store/models';

type LicenseEventType = Extract<EventType, `license.${string}`>;

const licenseData = (doc: Omit<LicenseDoc, 'outbox'>, now: Date): LicenseData => ({
  id: doc._id,
  key: doc.key,
  product_id: doc.product_id,
  customer_email: doc.customer_email,
  status: effectiveStatus(doc, now),
  expires_at: doc.expires_at ? doc.expires_at.toISOString() : null,
  created_at: doc.created_at.toISOString(),
});

const activationData = (a: ActivationDoc, licenseKey: string): ActivationData => ({
  id: a._id,
  license_id: a.license_id,
  license_key: licenseKey,
  fingerprint: a.fingerprint,
  name: a.name,
  created_at: a.created_at.toISOString(),
});

/** license.created|updated|suspended|reinstated|revoked|renewed|expired */
export const licenseEvent = (type: Exclude<LicenseEventType, 'license.activated' | 'license.deactivated'>, doc: Omit<LicenseDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent(type, doc.account_id, { license: licenseData(doc, now) } as never, now);

export const licenseCreated = (doc: Omit<LicenseDoc, 'outbox'>): DomainEvent => licenseEvent('license.created', doc, doc.created_at);

export const activationEvent = (type: 'license.activated' | 'license.deactivated', license: Omit<LicenseDoc, 'outbox'>, activation: ActivationDoc, now: Date): DomainEvent =>
  newEvent(type, license.account_id, { license: licenseData(license, now), activation: activationData(activation, license.key) }, now);
