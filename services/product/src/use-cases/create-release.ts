import { AppError, newId } from '@licensing/runtime';
import { releaseLimits, type CreateReleaseRequest } from '@licensing/proto';
import { checkReleaseInput } from '../domain/release';
import type { ReleaseDoc } from '../store/releases';
import type { ReleaseDeps } from './deps';
import { findProduct } from './read-products';

/** A new draft release of one of the account's products; nothing is published until it is. */
export async function createRelease(
  { releases, products, clock }: ReleaseDeps,
  req: CreateReleaseRequest,
): Promise<Omit<ReleaseDoc, 'outbox'>> {
  const input = checkReleaseInput(req);
  await findProduct(products, req.account_id, req.product_id);
  // Checked before each creation (two at once may both pass at the last place: a bound, not a count).
  if (await releases.hasAtLeast(req.account_id, req.product_id, releaseLimits.per_product))
    throw new AppError(
      'conflict',
      `this product has ${releaseLimits.per_product} releases, the most a product may have: delete drafts it no longer needs`,
    );
  const doc = {
    _id: newId('rel'),
    account_id: req.account_id,
    product_id: req.product_id,
    ...input,
    status: 'draft' as const,
    artifacts: [],
    yanked_at: null,
    created_at: clock.now(),
  };
  if (!(await releases.insert(doc)))
    throw new AppError(
      'conflict',
      `this product already has version ${input.version_key} (versions that differ only in their build metadata are one version)`,
    );
  return doc;
}
