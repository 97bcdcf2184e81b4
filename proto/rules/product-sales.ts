// What an archived product may still do, read where a sale or a new licence is decided: the checkout
// service (a new session) and the licence service (a new licence or batch). An archived product sells
// nothing and issues nothing new; the licences it has keep working (validation, activations, files,
// renewals), and a session paid before it was archived still gets its licence (the payment was taken).

/** A product as these rules read it: its id, and archived_at ('' or absent while on sale). */
export interface ProductOnSale {
  id: string;
  archived_at?: string;
}

/** Why nothing new may be made of this product ('sold': a checkout session; 'issued': a licence or batch); null when it may. */
export function archivedRefusal(product: ProductOnSale, what: 'sold' | 'issued'): string | null {
  if (!product.archived_at) return null;
  const action = what === 'sold' ? 'it sells nothing' : 'it issues no new licence';
  return `the product is archived (since ${product.archived_at}): ${action}, while its licences keep working; unarchive it (POST /api/v1/products/${product.id}/unarchive) first`;
}
