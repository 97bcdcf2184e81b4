import { AppError } from '@licensing/runtime';
import type { UpdateProductRequest } from '@licensing/proto';
import { checkProductInput } from '../domain/product';
import { checkPolicy } from '../domain/policy';
import { checkPrice } from '../domain/price';
import { productUpdated } from '../events/product-events';
import type { ProductDoc } from '../store/models';
import type { ProductDeps } from './deps';

/** Changes what is given (absent fields stay), with product.updated in the same write. */
export async function updateProduct(
  { store, outbox, clock }: ProductDeps,
  req: UpdateProductRequest,
): Promise<ProductDoc> {
  const current = await store.find(req.account_id, req.id);
  if (!current) throw AppError.notFound('product');
  const input = checkProductInput({
    name: req.name ?? current.name,
    description: req.description ?? current.description,
  });
  if (req.price && req.remove_price) throw AppError.invalid('price', 'give a price or null, not both');
  const changes = {
    ...input,
    ...(req.policy ? { policy: checkPolicy(req.policy) } : {}),
    ...(req.price ? { price: checkPrice(req.price) } : req.remove_price ? { price: null } : {}),
    ...(req.email_on_purchase !== undefined ? { email_on_purchase: req.email_on_purchase } : {}),
  };
  const now = clock.now();
  const updated = await store.update(req.account_id, req.id, changes, (after) => productUpdated(after, now));
  // Deleted (or moved) between the read and the write.
  if (!updated) throw AppError.notFound('product');
  // product.updated is out before the answer: the licence service's product cache forgets the old
  // policy before the caller can issue a licence under it (caches/product-cache.ts there).
  await outbox.flush(store.Product, req.id);
  return updated;
}
