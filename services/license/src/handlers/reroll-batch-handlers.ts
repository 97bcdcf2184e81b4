import type { Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import type { LicenseBatchRunner } from '../jobs/license-batch-runner';
import { createLicenseBatch, getLicenseBatch, toLicenseBatch, type BatchDeps } from '../use-cases/license-batches';
import { rerollLicense, type RerollDeps } from '../use-cases/reroll-license';
import { toLicense } from './mapping';

type RerollBatchHandlers = Pick<
  Handlers<typeof LicenseServiceService>,
  'rerollLicense' | 'createLicenseBatch' | 'getLicenseBatch'
>;

// Proto to use case and back; the rules live in use-cases/reroll-license.ts and use-cases/license-batches.ts.
export function rerollBatchHandlers(deps: RerollDeps & BatchDeps, runner: LicenseBatchRunner): RerollBatchHandlers {
  return {
    async rerollLicense(req) {
      const { doc, now } = await rerollLicense(deps, req);
      return toLicense(doc, now);
    },

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
