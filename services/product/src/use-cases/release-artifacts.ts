import { AppError } from '@licensing/runtime';
import type { AddArtifactRequest, RecordDownloadRequest } from '@licensing/proto';
import { checkArtifactInput, checkArtifactsWritable, unusedStorageKey, withArtifact } from '../domain/artifact';
import type { ReleaseDoc } from '../store/releases';
import type { ReleaseDeps } from './deps';
import { findRelease } from './read-releases';

/** Reads and compare-and-set writes a request makes before it gives up on a release that keeps changing. */
const ATTEMPTS = 3;

/**
 * Records a file the gateway has stored for a draft of the account: a file of the same name is
 * replaced, and its storage key answered for the gateway to remove. The list is written only if the
 * release is still the draft it was read as (FerretDB runs no transactions); a request that lost that
 * race judges the release again as it is now (published meanwhile: 409; deleted: 404).
 */
export async function addArtifact(
  { releases, clock }: ReleaseDeps,
  req: AddArtifactRequest,
): Promise<{ release: ReleaseDoc; replacedStorageKey: string }> {
  const input = checkArtifactInput(req.artifact);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await findRelease(releases, req.account_id, req.release_id);
    checkArtifactsWritable(current);
    const added = { ...input, downloads: 0, created_at: clock.now() };
    const { artifacts, replaced } = withArtifact(current.artifacts, added);
    if (await releases.setArtifacts(current, artifacts))
      return { release: { ...current, artifacts }, replacedStorageKey: unusedStorageKey(replaced, added) };
  }
  throw new AppError('conflict', 'the release changed while this file was being added: retry');
}

/**
 * One more download of a release's file, answering its count; 0 when the release or the file no
 * longer exists (the download it counts was handed out already: nothing to refuse).
 */
export async function recordDownload({ releases }: ReleaseDeps, req: RecordDownloadRequest): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const names = await releases.artifactNames(req.account_id, req.release_id);
    const index = names?.indexOf(req.filename) ?? -1;
    if (index < 0) return 0;
    const count = await releases.countDownload(req.account_id, req.release_id, index, req.filename);
    if (count !== null) return count;
    // The file moved or the release went between the two steps: looked up again.
  }
  throw new AppError('conflict', "the release's files changed while this download was being counted: retry");
}
