import { createHash } from 'node:crypto';
import { AppError } from '@licensing/runtime';
import {
  ARTIFACT_SIGNATURE_MAX_LENGTH,
  artifactFilenameProblem,
  artifactTargetProblem,
  type ArtifactArch,
  type ArtifactPlatform,
  type CreateUploadGrantRequest,
} from '@licensing/proto';

// An upload grant: the one-time capability the dashboard hands a browser to send one file of a draft to
// the gateway, which holds no session. What it names is checked as AddArtifact will check it, so a
// grant never allows an upload the record would refuse afterwards; the token is kept as its SHA-256
// only, as sessions and sign-in links are. Pure: the use cases make the token, read and write.

/** How long a grant works: one file's upload from a browser, with time to choose it. */
export const UPLOAD_GRANT_TTL_MS = 15 * 60 * 1000;

/** A grant's token: 32 random bytes, base64url without padding. */
export const UPLOAD_TOKEN_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** What a grant allows: one file of this name, for this machine, with this signature. */
export interface UploadGrantInput {
  filename: string;
  platform: ArtifactPlatform;
  arch: ArtifactArch;
  /** As X-Artifact-Signature would carry it, trimmed; '' without one. */
  signature: string;
}

type GrantFields = Pick<CreateUploadGrantRequest, 'filename' | 'platform' | 'arch' | 'signature'>;

/** A CreateUploadGrant request's file, each field checked as the upload route checks it ('' platform or arch: any). */
export function checkUploadGrantInput(req: GrantFields): UploadGrantInput {
  const nameProblem = artifactFilenameProblem(req.filename);
  if (nameProblem) throw AppError.invalid('filename', nameProblem);
  const platform = req.platform || 'any';
  const arch = req.arch || 'any';
  const target = artifactTargetProblem(platform, arch);
  if (target) throw AppError.invalid(target.field, target.message);
  if (req.signature.length > ARTIFACT_SIGNATURE_MAX_LENGTH || !/^[\x20-\x7e]*$/.test(req.signature))
    throw AppError.invalid(
      'signature',
      `signature must be printable ASCII of at most ${ARTIFACT_SIGNATURE_MAX_LENGTH} characters (e.g. base64)`,
    );
  return {
    filename: req.filename,
    platform: platform as ArtifactPlatform,
    arch: arch as ArtifactArch,
    signature: req.signature.trim(),
  };
}

/** Whether a string can be a grant's token at all (anything else is looked up nowhere). */
export const isUploadToken = (token: string): boolean => TOKEN_SHAPE.test(token);

/** What the store keeps of a token, and finds its grant by: hex SHA-256. */
export const tokenDigest = (token: string): string => createHash('sha256').update(token).digest('hex');
