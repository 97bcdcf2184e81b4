import { newEvent } from '@licensing/runtime';
import type { ApiKeyData, DomainEvent } from '@licensing/proto';
import type { ApiKeyDoc } from '../store/models';

// What this service publishes. The gateway listens for api_key.revoked to drop
// the key from its auth cache on every instance at once.
function data(doc: Omit<ApiKeyDoc, 'digest' | 'outbox' | 'slot_key'>): ApiKeyData {
  return {
    id: doc._id,
    prefix: doc.prefix,
    scope: doc.scope,
    name: doc.name,
    created_at: doc.created_at.toISOString(),
    ...(doc.revoked_at ? { revoked_at: doc.revoked_at.toISOString() } : {}),
    actor: doc.revoked_at ? (doc.revoked_by ?? 'operator') : doc.created_by,
  };
}

export const apiKeyCreated = (doc: Omit<ApiKeyDoc, 'digest' | 'outbox' | 'slot_key'>, now: Date): DomainEvent =>
  newEvent('api_key.created', doc.account_id, { api_key: data(doc) }, now);

export const apiKeyRevoked = (doc: Omit<ApiKeyDoc, 'digest' | 'outbox' | 'slot_key'>, now: Date): DomainEvent =>
  newEvent('api_key.revoked', doc.account_id, { api_key: data(doc) }, now);
