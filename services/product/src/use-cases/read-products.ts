import { AppError } from '@licensing/runtime';
import type { PageRequest } from '@licensing/proto';
import type { ProductDoc } from '../store/models';
import type { ProductStore } from '../store/queries';

/** A product of this account; another account's is not found, the same as one that does not exist. */
export async function findProduct(store: ProductStore, accountId: string, id: string): Promise<ProductDoc> {
  const doc = await store.find(accountId, id);
  if (!doc) throw AppError.notFound('product');
  return doc;
}

export const listProducts = (store: ProductStore, accountId: string, page: PageRequest | undefined) =>
  store.list(accountId, page);
