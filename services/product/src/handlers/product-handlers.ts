import { AppError, newId, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { Product, ProductServiceService } from '@licensing/proto';
import { checkProductInput } from '../domain/product';
import { DEFAULT_POLICY, checkPolicy, toContract } from '../domain/policy';
import { checkPrice } from '../domain/price';
import { productCreated, productUpdated } from '../events/product-events';
import type { ProductDoc } from '../store/models';
import type { ProductStore } from '../store/queries';
import type { ProductConfig } from '../config';

const toProduct = (doc: Omit<ProductDoc, 'outbox'>): Product => ({
  id: doc._id,
  accountId: doc.account_id,
  name: doc.name,
  description: doc.description,
  createdAt: doc.created_at.toISOString(),
  policy: toContract(doc.policy ?? DEFAULT_POLICY),
  price: doc.price ? { amount: doc.price.amount, currency: doc.price.currency } : undefined,
});

type ProductHandlers = Pick<Handlers<typeof ProductServiceService>, 'createProduct' | 'getProduct' | 'listProducts' | 'updateProduct'>;

export function productHandlers(ctx: ServiceContext<ProductConfig>, store: ProductStore): ProductHandlers {
  return {
    async createProduct(req) {
      const input = checkProductInput(req);
      const doc = { _id: newId('prod'), account_id: req.accountId, ...input, policy: checkPolicy(req.policy), price: req.price ? checkPrice(req.price) : null, created_at: ctx.clock.now() };
      await store.insert(doc, [productCreated(doc)]);
      ctx.outbox.flush(store.Product, doc._id);
      return toProduct(doc);
    },

    async getProduct(req) {
      const doc = await store.find(req.accountId, req.id);
      if (!doc) throw AppError.notFound('product');
      return toProduct(doc);
    },

    async updateProduct(req) {
      const current = await store.find(req.accountId, req.id);
      if (!current) throw AppError.notFound('product');
      const input = checkProductInput({ name: req.name ?? current.name, description: req.description ?? current.description });
      if (req.price && req.removePrice) throw AppError.invalid('price', 'give a price or null, not both');
      const changes = {
        ...input,
        ...(req.policy ? { policy: checkPolicy(req.policy) } : {}),
        ...(req.price ? { price: checkPrice(req.price) } : req.removePrice ? { price: null } : {}),
      };
      const now = ctx.clock.now();
      const updated = await store.update(req.accountId, req.id, changes, (after) => productUpdated(after, now));
      if (!updated) throw AppError.notFound('product');
      ctx.outbox.flush(store.Product, req.id);
      return toProduct(updated);
    },

    async listProducts(req) {
      const { items, page } = await store.list(req.accountId, req.page);
      return { data: items.map(toProduct), page };
    },
  };
}
