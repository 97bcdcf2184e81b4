import type { ArtifactArch, ArtifactPlatform, ReleaseChannel, ReleaseStatus } from './vocabulary';
import type { Release } from '../gen/licensing/v1/product';
import type { ReleaseData } from '../events';

// A release as people and webhook endpoints read it: the API's answer (GET /api/v1/releases/{id}) and
// release.published / release.yanked carry the same JSON, made here once from the gRPC message.

/** The REST shape: absent text and times are null. */
export const releaseJson = (r: Release): ReleaseData => ({
  id: r.id,
  product_id: r.product_id,
  version: r.version,
  channel: r.channel as ReleaseChannel,
  status: r.status as ReleaseStatus,
  notes: r.notes || null,
  published_at: r.published_at || null,
  yanked_at: r.yanked_at || null,
  entitlements: r.entitlements,
  artifacts: r.artifacts.map((a) => ({
    filename: a.filename,
    platform: a.platform as ArtifactPlatform,
    arch: a.arch as ArtifactArch,
    size: a.size,
    sha256: a.sha256,
    signature: a.signature || null,
    downloads: a.downloads,
    created_at: a.created_at,
  })),
  created_at: r.created_at,
});
