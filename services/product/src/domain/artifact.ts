import { AppError } from '@licensing/runtime';
import {
  ARTIFACTS_PER_RELEASE_MAX,
  ARTIFACT_SIGNATURE_MAX_LENGTH,
  artifactFilenameProblem,
  artifactTargetProblem,
  type Artifact,
  type ArtifactArch,
  type ArtifactPlatform,
  type ReleaseStatus,
} from '@licensing/proto';

// The rules of a release's files as the product service records them: what a file's record must hold
// (the gateway checked it already; the rules of proto/rules/artifact-rules.ts are judged again here,
// since this service keeps the record), which releases take files, and what adding one does to the
// list. Pure: the use case reads and writes, these decide.

/** A file's record, as the store keeps it. */
export interface ArtifactRecord {
  filename: string;
  platform: ArtifactPlatform;
  arch: ArtifactArch;
  size: number;
  /** Lowercase hex. */
  sha256: string;
  /** As the vendor sent it, '' without one. */
  signature: string;
  /** Where the gateway's artifact store keeps the file; never shown by the API. */
  storage_key: string;
  downloads: number;
  created_at: Date;
}

/** What a request sets of a record: the service sets its downloads and its time. */
export type ArtifactInput = Omit<ArtifactRecord, 'downloads' | 'created_at'>;

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

/** An AddArtifact request's file, each field checked; the first problem is refused naming its field. */
export function checkArtifactInput(a: Artifact | undefined): ArtifactInput {
  if (!a) throw AppError.invalid('artifact', 'artifact is required');
  const nameProblem = artifactFilenameProblem(a.filename);
  if (nameProblem) throw AppError.invalid('artifact.filename', nameProblem);
  const target = artifactTargetProblem(a.platform, a.arch);
  if (target) throw AppError.invalid(`artifact.${target.field}`, target.message);
  if (!Number.isSafeInteger(a.size) || a.size < 0)
    throw AppError.invalid('artifact.size', 'artifact.size must be a whole number of bytes, 0 or more');
  if (!SHA256_HEX.test(a.sha256))
    throw AppError.invalid('artifact.sha256', 'artifact.sha256 must be 64 hexadecimal characters');
  if (a.signature.length > ARTIFACT_SIGNATURE_MAX_LENGTH)
    throw AppError.invalid(
      'artifact.signature',
      `artifact.signature must be at most ${ARTIFACT_SIGNATURE_MAX_LENGTH} characters`,
    );
  if (!a.storage_key) throw AppError.invalid('artifact.storage_key', 'artifact.storage_key is required');
  return {
    filename: a.filename,
    platform: a.platform as ArtifactPlatform,
    arch: a.arch as ArtifactArch,
    size: a.size,
    sha256: a.sha256.toLowerCase(),
    signature: a.signature,
    storage_key: a.storage_key,
  };
}

/**
 * Only a draft takes files (409 otherwise): a published release was offered with the files it had,
 * and a licence that downloaded one must find the same file under its name.
 */
export function checkArtifactsWritable(r: { status: ReleaseStatus }): void {
  if (r.status !== 'draft')
    throw new AppError('conflict', `this release is ${r.status}: files can be added to a draft only`);
}

/** A release's files with `added`, and the file it replaced (same filename), if any. */
export interface ArtifactsWith<T> {
  artifacts: T[];
  replaced: T | null;
}

/**
 * The list with `added`: a file of the same name is replaced where it stood (a re-upload), any other
 * name goes last; one file beyond ARTIFACTS_PER_RELEASE_MAX is refused (409), as the release's record
 * carries every file.
 */
export function withArtifact<T extends { filename: string }>(current: readonly T[], added: T): ArtifactsWith<T> {
  const at = current.findIndex((a) => a.filename === added.filename);
  if (at >= 0) return { artifacts: current.map((a, i) => (i === at ? added : a)), replaced: current[at] };
  if (current.length >= ARTIFACTS_PER_RELEASE_MAX)
    throw new AppError(
      'conflict',
      `this release has ${ARTIFACTS_PER_RELEASE_MAX} files, the most a release may have: replace one (same filename) instead`,
    );
  return { artifacts: [...current, added], replaced: null };
}

/**
 * The stored file a replacement leaves unused, for the gateway to remove ('' for none): never the
 * new file's own key, should the gateway store a re-upload under the same key.
 */
export const unusedStorageKey = (replaced: { storage_key: string } | null, added: { storage_key: string }): string =>
  replaced && replaced.storage_key !== added.storage_key ? replaced.storage_key : '';
