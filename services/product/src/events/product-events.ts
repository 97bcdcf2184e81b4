import { newEnvelope, newEvent } from '@licensing/runtime';
import type { DomainEvent, ProductActionEvent, ProductActionType } from '@licensing/proto';
import type { ProductDoc } from '../store/models';

const data = (doc: Omit<ProductDoc, 'outbox'>) => ({
  product: {
    id: doc._id,
    name: doc.name,
    description: doc.description,
    created_at: doc.created_at.toISOString(),
    archived_at: doc.archived_at ? doc.archived_at.toISOString() : null,
  },
});

export const productCreated = (doc: Omit<ProductDoc, 'outbox'>): DomainEvent =>
  newEvent('product.created', doc.account_id, data(doc), doc.created_at);

export const productUpdated = (doc: Omit<ProductDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent('product.updated', doc.account_id, data(doc), now);

/**
 * The audit log's product.archived, product.unarchived or product.deleted (never a webhook's), stored
 * and published as the product's events are (the outbox takes any envelope).
 */
export const productAction = (type: ProductActionType, doc: Omit<ProductDoc, 'outbox'>, now: Date): DomainEvent =>
  newEnvelope(
    type,
    doc.account_id,
    { product: { id: doc._id, name: doc.name } },
    now,
  ) satisfies ProductActionEvent as unknown as DomainEvent;
