import { AppError } from '@licensing/runtime';

// A product is on sale or archived. An archived product sells nothing (checkout sessions for it are
// refused) and issues nothing new (licences and batches for it are refused), while its licences keep
// working: they validate, activate, get their files and renew as before. A product is deleted only
// while nothing depends on it: no licence (a licence names its product for its policy, entitlements
// and signing key) and no release (published and yanked ones cannot be deleted, and their files and
// download counts are what an update feed and its audit rest on).

/** What the state rules read of a product. */
export interface ProductState {
  archived_at?: Date | null;
}

export const isArchived = (p: ProductState): boolean => !!p.archived_at;

/** The change that archives a product now; 409 for one archived already. */
export function archiving(p: ProductState, now: Date): { archived_at: Date } {
  if (p.archived_at)
    throw new AppError(
      'conflict',
      `the product is archived already (since ${p.archived_at.toISOString()}): unarchive it to sell it again`,
    );
  return { archived_at: now };
}

/** The change that puts an archived product back on sale; 409 for one on sale. */
export function unarchiving(p: ProductState): { archived_at: null } {
  if (!p.archived_at)
    throw new AppError('conflict', 'the product is not archived: only an archived product can be unarchived');
  return { archived_at: null };
}

/** What a deletion depends on, as far as it is known (undefined: not asked yet). */
export interface DeletionFacts {
  releases?: boolean;
  licences?: boolean;
}

/** Refuses (409, naming why) the deletion of a product that has releases or licences. */
export function checkDeletable(facts: DeletionFacts): void {
  if (facts.releases)
    throw new AppError(
      'conflict',
      'the product has releases: a product is deleted only without any (delete its drafts; a product with published or yanked releases can be archived instead)',
    );
  if (facts.licences)
    throw new AppError(
      'conflict',
      'the product has licences: a product is deleted only if it never issued one that still exists (archive it instead: it then sells and issues nothing new, and its licences keep working)',
    );
}
