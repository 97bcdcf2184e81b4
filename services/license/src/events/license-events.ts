import { newEvent } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { LicenseDoc } from '../store/models';

export const licenseCreated = (doc: Omit<LicenseDoc, 'outbox'>): DomainEvent =>
  newEvent(
    'license.created',
    doc.account_id,
    { license: { id: doc._id, key: doc.key, product_id: doc.product_id, customer_email: doc.customer_email, status: doc.status, created_at: doc.created_at.toISOString() } },
    doc.created_at,
  );
