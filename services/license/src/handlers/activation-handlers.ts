import type { Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { activate, deactivate, heartbeat, listActivations } from '../use-cases/activations';
import type { LicenseDeps } from '../use-cases/deps';
import { toActivation } from './mapping';

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function activationHandlers(
  deps: LicenseDeps,
): Pick<Handlers<typeof LicenseServiceService>, 'activate' | 'listActivations' | 'deactivate' | 'heartbeat'> {
  return {
    async activate(req) {
      const { activation, created } = await activate(deps, req);
      return { activation: toActivation(activation), created };
    },

    async listActivations(req) {
      const { items, page } = await listActivations(deps, req.account_id, req.key, req.page);
      return { data: items.map(toActivation), page };
    },

    deactivate: async (req) =>
      toActivation(
        await deactivate(deps, req.account_id, req.key, req.activation_id, {
          keyScope: req.key_scope,
          fingerprint: req.fingerprint,
        }),
      ),

    heartbeat: async (req) => toActivation(await heartbeat(deps, req.account_id, req.key, req.activation_id)),
  };
}
