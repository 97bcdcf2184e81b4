import { AppError, newId } from '@licensing/runtime';
import { accountLimits, type CreateProductRequest } from '@licensing/proto';
import { checkProductInput } from '../domain/product';
import { checkPolicy } from '../domain/policy';
import { checkPrice } from '../domain/price';
import { productCreated } from '../events/product-events';
import type { ProductDoc } from '../store/models';
import type { ProductDeps } from './deps';

/** A new product, stored with product.created in the same write. */
export async function createProduct(
  { store, outbox, clock }: ProductDeps,
  req: CreateProductRequest,
): Promise<Omit<ProductDoc, 'outbox'>> {
  const input = checkProductInput(req);
  // Checked before each creation (two at once may both pass at the last place: a bound, not a count).
  if (await store.hasAtLeast(req.account_id, accountLimits.products))
    throw new AppError(
      'conflict',
      `this account has ${accountLimits.products} products, the most an account may have: reuse one (an existing product can be renamed and its policy changed)`,
    );
  const doc = {
    _id: newId('prod'),
    account_id: req.account_id,
    ...input,
    policy: checkPolicy(req.policy),
    price: req.price ? checkPrice(req.price) : null,
    email_on_purchase: req.email_on_purchase ?? true,
    created_at: clock.now(),
  };
  await store.insert(doc, [productCreated(doc)]);
  outbox.flush(store.Product, doc._id);
  return doc;
}
