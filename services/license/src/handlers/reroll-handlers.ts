import type { Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { rerollLicense, type RerollDeps } from '../use-cases/reroll-license';
import { toLicense } from './mapping';

// Proto to use case and back; the rules live in use-cases/reroll-license.ts.
export function rerollHandlers(deps: RerollDeps): Pick<Handlers<typeof LicenseServiceService>, 'rerollLicense'> {
  return {
    async rerollLicense(req) {
      const { doc, now } = await rerollLicense(deps, req);
      return toLicense(doc, now);
    },
  };
}
