import { newEvent } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { ProductDoc } from '../store/models';

const data = (doc: Omit<ProductDoc, 'outbox'>) => ({
  product: { id: doc._id, name: doc.name, description: doc.description, created_at: doc.created_at.toISOString() },
});

export const productCreated = (doc: Omit<ProductDoc, 'outbox'>): DomainEvent =>
  newEvent('product.created', doc.account_id, data(doc), doc.created_at);

export const productUpdated = (doc: Omit<ProductDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent('product.updated', doc.account_id, data(doc), now);
