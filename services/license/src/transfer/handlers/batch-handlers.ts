import type { Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import type { LicenseBatchRunner } from '../jobs/license-batch-runner';
import { createLicenseBatch, getLicenseBatch, toLicenseBatch, type BatchDeps } from '../use-cases/license-batches';

// Proto to use case and back (the licence service's CreateLicenseBatch and GetLicenseBatch); the rules
// live in use-cases/license-batches.ts.
export function batchHandlers(
  deps: BatchDeps,
  runner: LicenseBatchRunner,
): Pick<Handlers<typeof LicenseServiceService>, 'createLicenseBatch' | 'getLicenseBatch'> {
  return {
    async createLicenseBatch(req) {
      const doc = await createLicenseBatch(deps, req);
      if (doc.status === 'running') runner.kick(doc._id);
      return toLicenseBatch(doc);
    },

    async getLicenseBatch(req) {
      return toLicenseBatch(await getLicenseBatch(deps, req.account_id, req.id));
    },
  };
}
