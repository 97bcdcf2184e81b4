import type { Handlers } from '@licensing/runtime';
import type { ProductServiceService } from '@licensing/proto';
import { releaseMessage } from '../store/releases';
import { createRelease } from '../use-cases/create-release';
import type { ReleaseDeps } from '../use-cases/deps';
import { findReleases } from '../use-cases/find-releases';
import { findRelease, listReleases } from '../use-cases/read-releases';
import { addArtifact, recordDownload } from '../use-cases/release-artifacts';
import { deleteRelease, publishRelease, yankRelease } from '../use-cases/release-states';

type ReleaseHandlers = Pick<
  Handlers<typeof ProductServiceService>,
  | 'createRelease'
  | 'getRelease'
  | 'listReleases'
  | 'publishRelease'
  | 'yankRelease'
  | 'deleteRelease'
  | 'addArtifact'
  | 'recordDownload'
  | 'findReleases'
>;

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function releaseHandlers(deps: ReleaseDeps): ReleaseHandlers {
  return {
    createRelease: async (req) => releaseMessage(await createRelease(deps, req)),
    getRelease: async (req) => releaseMessage(await findRelease(deps.releases, req.account_id, req.id)),
    async listReleases(req) {
      const { items, page } = await listReleases(deps, req);
      return { data: items.map(releaseMessage), page };
    },
    publishRelease: async (req) => releaseMessage(await publishRelease(deps, req)),
    yankRelease: async (req) => releaseMessage(await yankRelease(deps, req)),
    deleteRelease: async (req) => releaseMessage(await deleteRelease(deps, req)),
    async addArtifact(req) {
      const { release, replacedStorageKey } = await addArtifact(deps, req);
      return { release: releaseMessage(release), replaced_storage_key: replacedStorageKey };
    },
    recordDownload: async (req) => ({ downloads: await recordDownload(deps, req) }),
    // One answer, never paged: its limit bounds it (a cursor would have nothing to continue from).
    findReleases: async (req) => ({
      data: (await findReleases(deps, req)).map(releaseMessage),
      page: { has_more: false, next_cursor: '' },
    }),
  };
}
