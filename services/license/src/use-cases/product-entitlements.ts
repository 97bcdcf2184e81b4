import { AppError } from '@licensing/runtime';
import { distinctProducts, withProductEntitlements } from '../domain/entitlements';
import type { LicenseDoc } from '../store/models';
import type { ProductLookup } from './deps';

type Licence = Pick<LicenseDoc, 'account_id' | 'product_id' | 'policy'>;

/**
 * A product's current entitlements, through the product cache (a hit: no gRPC call). `fresh`: read past
 * the cache (a gateway heard the product change lately and this instance may not have yet). A product
 * that cannot be found contributes none; any other failure is thrown (the answer would be wrong).
 */
export async function productEntitlements(
  products: ProductLookup,
  accountId: string,
  productId: string,
  fresh = false,
): Promise<string[]> {
  const req = { account_id: accountId, id: productId };
  try {
    const product =
      fresh && products.getFreshProduct ? await products.getFreshProduct(req) : await products.getProduct(req);
    return product.policy?.entitlements ?? [];
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return [];
    throw err;
  }
}

/** A licence with its product's current entitlements in its policy (domain/entitlements.ts). */
export async function withLiveEntitlements<T extends Licence>(
  products: ProductLookup,
  doc: T,
  fresh = false,
): Promise<T> {
  return withProductEntitlements(doc, await productEntitlements(products, doc.account_id, doc.product_id, fresh));
}

/** Licences (a page of them), each product looked up once however many of its licences the page holds. */
export async function withLiveEntitlementsAll<T extends Licence>(
  products: ProductLookup,
  docs: readonly T[],
): Promise<T[]> {
  if (!docs.length) return [];
  const accountId = docs[0].account_id;
  const ids = distinctProducts(docs);
  const codes = new Map(
    await Promise.all(ids.map(async (id) => [id, await productEntitlements(products, accountId, id)] as const)),
  );
  return docs.map((d) => withProductEntitlements(d, codes.get(d.product_id) ?? []));
}
