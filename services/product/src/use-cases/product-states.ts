import { AppError } from '@licensing/runtime';
import type { GetProductRequest } from '@licensing/proto';
import { archiving, checkDeletable, unarchiving } from '../domain/product-state';
import { productAction, productUpdated } from '../events/product-events';
import type { ProductDoc } from '../store/models';
import type { ProductDeps, ProductStateDeps } from './deps';
import { findProduct } from './read-products';

const changedMeanwhile = () =>
  new AppError('conflict', 'the product changed while this request was changing it: read it again and retry');

/**
 * Writes an archive or unarchive with its product.updated (what the licence service's product cache
 * and the gateway's validation cache follow) and the audit log's action, only if the product is still
 * as it was read; product.updated is out before this returns, so whoever acts on the answer (an
 * issuance, a checkout) finds the product's new state, not a cached copy of the old one.
 */
async function writeState(
  { store, outbox }: Pick<ProductDeps, 'store' | 'outbox'>,
  current: ProductDoc,
  changes: Pick<ProductDoc, 'archived_at'>,
  now: Date,
  action?: 'product.archived' | 'product.unarchived',
): Promise<ProductDoc | null> {
  const after = { ...current, ...changes };
  const events = [productUpdated(after, now), ...(action ? [productAction(action, after, now)] : [])];
  if (!(await store.changeState(current, changes, events))) return null;
  await outbox.flush(store.Product, after._id, events);
  return after;
}

/** Archived (sells and issues nothing new; its licences keep working); 409 for one archived already. */
export async function archiveProduct(deps: ProductDeps, req: GetProductRequest): Promise<ProductDoc> {
  const current = await findProduct(deps.store, req.account_id, req.id);
  const now = deps.clock.now();
  const after = await writeState(deps, current, archiving(current, now), now, 'product.archived');
  if (!after) throw changedMeanwhile();
  return after;
}

/** Back on sale; 409 for one that is not archived. */
export async function unarchiveProduct(deps: ProductDeps, req: GetProductRequest): Promise<ProductDoc> {
  const current = await findProduct(deps.store, req.account_id, req.id);
  const after = await writeState(deps, current, unarchiving(current), deps.clock.now(), 'product.unarchived');
  if (!after) throw changedMeanwhile();
  return after;
}

/**
 * Removes a product that has no release and no licence, with its signing keys; answers it as it was.
 *
 * A licence may be issued while this runs: the licence service is asked, then the product is archived
 * (product.updated out before going on: the licence service's product caches forget it, and from then
 * on refuse new licences for it), then asked again, so a licence issued before the archive took effect
 * is seen by the second question and the deletion refused (the product is put back on sale as it was).
 * What is left: an instance of the licence service that has not yet heard product.updated (it follows
 * the stream: normally milliseconds) could still issue from its cached copy between the two; the
 * second question narrows that to the time the event takes to arrive.
 *
 * Crash-safe without transactions: the deletion's record (carrying product.deleted through the outbox)
 * is written first, then the keys go, the product last; a call cut short leaves the product archived,
 * and the next one finishes it without a second event.
 */
export async function deleteProduct(deps: ProductStateDeps, req: GetProductRequest): Promise<ProductDoc> {
  const { store, clock, licenses } = deps;
  const current = await findProduct(store, req.account_id, req.id);
  const hasLicences = async () =>
    (await licenses.hasLicenses({ account_id: req.account_id, product_id: req.id })).has_licenses;
  // The refusals that change nothing first.
  checkDeletable({ releases: await deps.releases.hasAtLeast(req.account_id, req.id, 1) });
  checkDeletable({ licences: await hasLicences() });
  let archived = current;
  if (!current.archived_at) {
    const now = clock.now();
    const after = await writeState(deps, current, archiving(current, now), now);
    if (!after) throw changedMeanwhile();
    archived = after;
  }
  // Asked again now that nothing new is issued for it; and a release made meanwhile (releases do not
  // look at archiving: an archived product may still ship fixes to the licences it has).
  const licences = await hasLicences();
  const releases = await deps.releases.hasAtLeast(req.account_id, req.id, 1);
  if (licences || releases) {
    // As it was before this call (back on sale, if it was).
    if (!current.archived_at) await writeState(deps, archived, { archived_at: null }, clock.now());
    checkDeletable({ releases, licences });
  }
  const now = clock.now();
  const events = [productAction('product.deleted', current, now)];
  if (await deps.deletions.insert({ _id: current._id, account_id: current.account_id, created_at: now }, events))
    deps.outbox.flush(deps.deletions.Deletion, current._id, events);
  await deps.keys.removeOf(current._id);
  if (!(await store.remove(req.account_id, req.id))) throw AppError.notFound('product');
  return current;
}
