import { newEvent } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { ProductDoc } from '../store/models';

export const productCreated = (doc: Omit<ProductDoc, 'outbox'>): DomainEvent =>
  newEvent('product.created', doc.account_id, { product: { id: doc._id, name: doc.name, description: doc.description, created_at: doc.created_at.toISOString() } }, doc.created_at);
