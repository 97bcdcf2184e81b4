import type { Handlers } from '@licensing/runtime';
import type { AccountServiceService } from '@licensing/proto';
import { claimRequestKey, renewRequestKey, settleRequestKey, type RequestKeyDeps } from '../use-cases/request-keys';

// Proto to use case: the Idempotency-Key of the gateway's POSTs.
export function requestKeyHandlers(
  deps: RequestKeyDeps,
): Pick<Handlers<typeof AccountServiceService>, 'claimRequestKey' | 'renewRequestKey' | 'settleRequestKey'> {
  return {
    claimRequestKey: (req) => claimRequestKey(deps, req),
    renewRequestKey: async (req) => {
      await renewRequestKey(deps, req);
      return {};
    },
    settleRequestKey: async (req) => {
      await settleRequestKey(deps, req);
      return {};
    },
  };
}
