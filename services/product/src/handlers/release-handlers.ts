import type { Handlers } from '@licensing/runtime';
import type { Release, ProductServiceService } from '@licensing/proto';
import type { ReleaseDoc } from '../store/releases';
import { createRelease } from '../use-cases/create-release';
import type { ReleaseDeps } from '../use-cases/deps';
import { findRelease, listReleases } from '../use-cases/read-releases';
import { deleteRelease, publishRelease, yankRelease } from '../use-cases/release-states';

const toRelease = (doc: Omit<ReleaseDoc, 'outbox'>): Release => ({
  id: doc._id,
  product_id: doc.product_id,
  version: doc.version,
  channel: doc.channel,
  status: doc.status,
  notes: doc.notes,
  published_at: doc.published_at?.toISOString() ?? '',
  entitlements: doc.entitlements,
  artifacts: doc.artifacts.map((a) => ({
    filename: a.filename,
    platform: a.platform,
    arch: a.arch,
    size: a.size,
    sha256: a.sha256,
    signature: a.signature,
    downloads: a.downloads,
    created_at: a.created_at.toISOString(),
  })),
  created_at: doc.created_at.toISOString(),
  yanked_at: doc.yanked_at?.toISOString() ?? '',
});

type ReleaseHandlers = Pick<
  Handlers<typeof ProductServiceService>,
  'createRelease' | 'getRelease' | 'listReleases' | 'publishRelease' | 'yankRelease' | 'deleteRelease'
>;

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function releaseHandlers(deps: ReleaseDeps): ReleaseHandlers {
  return {
    createRelease: async (req) => toRelease(await createRelease(deps, req)),
    getRelease: async (req) => toRelease(await findRelease(deps.releases, req.account_id, req.id)),
    async listReleases(req) {
      const { items, page } = await listReleases(deps, req);
      return { data: items.map(toRelease), page };
    },
    publishRelease: async (req) => toRelease(await publishRelease(deps, req)),
    yankRelease: async (req) => toRelease(await yankRelease(deps, req)),
    deleteRelease: async (req) => toRelease(await deleteRelease(deps, req)),
  };
}
