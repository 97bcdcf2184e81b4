import type { Handlers } from '@licensing/runtime';
import type { ProductServiceService } from '@licensing/proto';
import { releaseMessage } from '../store/releases';
import { createRelease } from '../use-cases/create-release';
import type { ReleaseDeps } from '../use-cases/deps';
import { findRelease, listReleases } from '../use-cases/read-releases';
import { deleteRelease, publishRelease, yankRelease } from '../use-cases/release-states';

type ReleaseHandlers = Pick<
  Handlers<typeof ProductServiceService>,
  'createRelease' | 'getRelease' | 'listReleases' | 'publishRelease' | 'yankRelease' | 'deleteRelease'
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
  };
}
