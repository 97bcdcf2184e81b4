import { AppError } from '@licensing/runtime';
import { archivedRefusal, type Product } from '@licensing/proto';
import type { ProductLookup } from './deps';

/**
 * The product a new licence (or batch) would be issued for, refused (409) when it is archived
 * (proto/rules/product-sales.ts). Read through the product cache, which product.updated keeps exact:
 * an archive is out on the stream before the product service answers it.
 */
export async function issuableProduct(products: ProductLookup, accountId: string, productId: string): Promise<Product> {
  const product = await products.getProduct({ account_id: accountId, id: productId });
  const refusal = archivedRefusal(product, 'issued');
  if (refusal) throw new AppError('conflict', refusal);
  return product;
}
