import { AppError } from '@licensing/runtime';
import type { DeleteLicenseRequest } from '@licensing/proto';
import { licenseEvent } from '../events/license-events';
import type { LicenseAt, LicenseDeps } from './deps';
import { withLiveEntitlements } from './product-entitlements';
import { ownLicense } from './read-licenses';

/**
 * An account deletes one of its licences (DELETE /api/v1/licenses/{key}): a key it imported by mistake,
 * or one it no longer wants to answer for. The licence, its activations and their sightings go; its key
 * then validates as not found, and its licence credential stops working, everywhere at once (every cache
 * of licences evicts it on license.deleted, and this instance's before it answers).
 *
 * Refused (409) while a subscription bills it (any status but canceled): Stripe would go on charging for
 * a licence that no longer exists. Cancel the subscription first.
 *
 * Crash-safe without transactions: the deletion's record (carrying license.deleted through the outbox) is
 * written first, then the documents, the licence last; a call cut short is finished by the next one,
 * which finds the licence still there and publishes no second event.
 */
export async function deleteLicense(
  deps: Pick<LicenseDeps, 'store' | 'outbox' | 'clock' | 'products'>,
  req: Pick<DeleteLicenseRequest, 'account_id' | 'key'>,
): Promise<LicenseAt> {
  const { store, outbox, clock } = deps;
  const doc = await ownLicense(store, req.account_id, req.key);
  if (doc.subscription && doc.subscription.status !== 'canceled')
    throw new AppError(
      'conflict',
      `the licence is billed by subscription ${doc.subscription.id} (${doc.subscription.status}): cancel it before deleting the licence`,
    );
  const now = clock.now();
  const last = await withLiveEntitlements(deps.products, doc);
  const events = [licenseEvent('license.deleted', last, now)];
  if (await store.insertDeletion({ _id: doc._id, account_id: doc.account_id, created_at: now }, events))
    outbox.flush(store.models.LicenseDeletion, doc._id, events);
  await store.deleteLicense(doc._id);
  return { doc: last, now };
}
