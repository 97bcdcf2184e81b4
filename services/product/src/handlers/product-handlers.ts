import { AppError, newId, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { Product, ProductServiceService } from '@licensing/proto';
import { checkProductInput } from '../domain/product';
import { productCreated } from '../events/product-events';
import type { ProductDoc } from '../store/models';
import type { ProductStore } from '../store/queries';
import type { ProductConfig } from '../config';

const toProduct = (doc: Omit<ProductDoc, 'outbox'>): Product => ({
  id: doc._id,
  accountId: doc.account_id,
  name: doc.name,
  description: doc.description,
  createdAt: doc.created_at.toISOString(),
});

export function productHandlers(ctx: ServiceContext<ProductConfig>, store: ProductStore): Handlers<typeof ProductServiceService> {
  return {
    async createProduct(req) {
      const input = checkProductInput(req);
      const doc = { _id: newId('prod'), account_id: req.accountId, ...input, created_at: ctx.clock.now() };
      await store.insert(doc, [productCreated(doc)]);
      ctx.outbox.flush(store.Product, doc._id);
      return toProduct(doc);
    },

    async getProduct(req) {
      const doc = await store.find(req.accountId, req.id);
      if (!doc) throw AppError.notFound('product');
      return toProduct(doc);
    },

    async listProducts(req) {
      const { items, page } = await store.list(req.accountId, req.page);
      return { data: items.map(toProduct), page };
    },
  };
}
