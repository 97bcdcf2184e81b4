import { AppError } from '@licensing/runtime';
import type { DomainEvent, GetReleaseRequest } from '@licensing/proto';
import { checkDeletable, publishing, yanking, type ReleaseChange, type ReleaseState } from '../domain/release';
import { releasePublished, releaseYanked } from '../events/release-events';
import type { ReleaseDoc } from '../store/releases';
import type { ReleaseDeps } from './deps';
import { findRelease } from './read-releases';

type Step = (r: ReleaseState, now: Date) => ReleaseChange;
type EventOf = (after: ReleaseDoc, now: Date) => DomainEvent;

/**
 * Reads the release, lets the rule decide, and writes the change with its event only if the release
 * is still as it was read. A request that lost that race to another judges the release again as it
 * is now (two publishes at once: the second answers the published release).
 */
async function changeRelease(
  { releases, outbox, clock }: ReleaseDeps,
  req: GetReleaseRequest,
  step: Step,
  eventOf: EventOf,
): Promise<ReleaseDoc> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const current = await findRelease(releases, req.account_id, req.id);
    const now = clock.now();
    const changes = step(current, now);
    if (!changes) return current;
    const after = { ...current, ...changes };
    const event = eventOf(after, now);
    if (await releases.change(current, changes, event)) {
      // Out before the answer: whoever acts on the answer (an update feed) finds the event sent.
      await outbox.flush(releases.Release, after._id, [event]);
      return after;
    }
  }
  throw new AppError('conflict', 'the release changed while this request was changing it: read it again and retry');
}

/** A draft becomes published, with release.published in the same write; a published one is answered as it is. */
export const publishRelease = (deps: ReleaseDeps, req: GetReleaseRequest) =>
  changeRelease(deps, req, publishing, releasePublished);

/** A draft or published release becomes yanked, with release.yanked in the same write; a yanked one is answered as it is. */
export const yankRelease = (deps: ReleaseDeps, req: GetReleaseRequest) =>
  changeRelease(deps, req, yanking, releaseYanked);

/** Removes a draft and answers it as it was; any other release is refused (409). */
export async function deleteRelease({ releases }: ReleaseDeps, req: GetReleaseRequest): Promise<ReleaseDoc> {
  const current = await findRelease(releases, req.account_id, req.id);
  checkDeletable(current);
  if (await releases.deleteDraft(req.account_id, req.id)) return current;
  // Published or removed by another request in between: judged as it is now (404 or 409).
  checkDeletable(await findRelease(releases, req.account_id, req.id));
  throw new AppError('conflict', 'the release changed while this request was deleting it: read it again and retry');
}
