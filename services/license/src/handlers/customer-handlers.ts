import type { Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { deactivateForCustomer } from '../use-cases/customer-portal';
import type { LicenseDeps } from '../use-cases/deps';
import { eraseCustomer } from '../use-cases/erase-customer';
import type { TransferErasure } from '../use-cases/license-core';
import { toActivation } from './mapping';

// Proto to use case and back: what the customer portal and the erasure of a customer ask of licences.
export function customerHandlers(
  deps: LicenseDeps,
  /** The transfer module's licence batches and export files, which an erasure goes through too. */
  transfer: TransferErasure,
): Pick<Handlers<typeof LicenseServiceService>, 'deactivateForCustomer' | 'eraseCustomer'> {
  return {
    deactivateForCustomer: async (req) => toActivation(await deactivateForCustomer(deps, req)),
    eraseCustomer: async (req) => ({ erased: await eraseCustomer({ ...deps, transfer }, req) }),
  };
}
