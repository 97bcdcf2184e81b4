import type { Handlers } from '@licensing/runtime';
import { DEFAULT_POLICY, policyToContract, type Product, type ProductServiceService } from '@licensing/proto';
import type { ProductDoc } from '../store/models';
import { createProduct } from '../use-cases/create-product';
import type { ProductStateDeps } from '../use-cases/deps';
import { archiveProduct, deleteProduct, unarchiveProduct } from '../use-cases/product-states';
import { findProduct, listProducts } from '../use-cases/read-products';
import { updateProduct } from '../use-cases/update-product';
import { priceToContract } from '../domain/price';

const toProduct = (doc: Omit<ProductDoc, 'outbox'>): Product => ({
  id: doc._id,
  account_id: doc.account_id,
  name: doc.name,
  description: doc.description,
  created_at: doc.created_at.toISOString(),
  // A product stored without a policy, or before a policy field existed, reads as the default.
  policy: policyToContract(doc.policy ?? DEFAULT_POLICY),
  price: doc.price ? priceToContract(doc.price) : undefined,
  email_on_purchase: doc.email_on_purchase !== false,
  archived_at: doc.archived_at ? doc.archived_at.toISOString() : undefined,
});

type ProductHandlers = Pick<
  Handlers<typeof ProductServiceService>,
  | 'createProduct'
  | 'getProduct'
  | 'listProducts'
  | 'updateProduct'
  | 'archiveProduct'
  | 'unarchiveProduct'
  | 'deleteProduct'
>;

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function productHandlers(deps: ProductStateDeps): ProductHandlers {
  return {
    createProduct: async (req) => toProduct(await createProduct(deps, req)),
    getProduct: async (req) => toProduct(await findProduct(deps.store, req.account_id, req.id)),
    updateProduct: async (req) => toProduct(await updateProduct(deps, req)),
    archiveProduct: async (req) => toProduct(await archiveProduct(deps, req)),
    unarchiveProduct: async (req) => toProduct(await unarchiveProduct(deps, req)),
    deleteProduct: async (req) => toProduct(await deleteProduct(deps, req)),
    async listProducts(req) {
      const { items, page } = await listProducts(deps.store, req.account_id, req.page);
      return { data: items.map(toProduct), page };
    },
  };
}
