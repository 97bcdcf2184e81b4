import { randomBytes } from 'node:crypto';
import { AppError } from '@licensing/runtime';
import type { CreateUploadGrantRequest, RedeemUploadGrantRequest } from '@licensing/proto';
import { checkArtifactsWritable } from '../domain/artifact';
import {
  checkUploadGrantInput,
  isUploadToken,
  tokenDigest,
  UPLOAD_GRANT_TTL_MS,
  UPLOAD_TOKEN_BYTES,
} from '../domain/upload-grant';
import type { UploadGrantDoc } from '../store/upload-grants';
import type { UploadGrantDeps } from './deps';
import { findRelease } from './read-releases';

/**
 * A grant to upload one file to a draft of the account (409 for any other release, 404 for another
 * account's): its token, answered once and kept only as its digest, and when it stops working.
 */
export async function createUploadGrant(
  { grants, releases, clock }: UploadGrantDeps,
  req: CreateUploadGrantRequest,
): Promise<{ token: string; expiresAt: Date }> {
  const input = checkUploadGrantInput(req);
  checkArtifactsWritable(await findRelease(releases, req.account_id, req.release_id));
  const token = randomBytes(UPLOAD_TOKEN_BYTES).toString('base64url');
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + UPLOAD_GRANT_TTL_MS);
  await grants.insert({
    _id: tokenDigest(token),
    account_id: req.account_id,
    release_id: req.release_id,
    ...input,
    expires_at: expiresAt,
    used_at: null,
    created_at: now,
  });
  return { token, expiresAt };
}

/**
 * The grant of a token, used up: not_found for a token that is unknown, expired or redeemed already
 * (nothing tells them apart). Whether the release still takes the file is the upload's to find out.
 */
export async function redeemUploadGrant(
  { grants, clock }: UploadGrantDeps,
  req: RedeemUploadGrantRequest,
): Promise<UploadGrantDoc> {
  const grant = isUploadToken(req.token) ? await grants.redeem(tokenDigest(req.token), clock.now()) : null;
  if (!grant) throw AppError.notFound('upload grant');
  return grant;
}
