import { AppError } from '@licensing/runtime';
import { excessMachines } from '../domain/overrides';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import { freeActivation } from './activations';
import type { LicenseDeps } from './deps';

// A licence's max_activations changed by its own terms (domain/overrides.ts): the machines it is active
// on must fit the new limit. Lowered below them, the change is refused (409) unless the caller asked
// for the excess to be freed: then the longest-unseen machines are deactivated, each with
// license.deactivated (reason limit_lowered), once the licence's new limit is written.

/** Passes through the active machines when a concurrent activation slipped in while the excess was freed. */
const FIT_ROUNDS = 3;

/**
 * The limit the machines must be brought within once `doc` has `max` (undefined: nothing to do: no
 * limit, or the same one). A 409 when the licence is active on more machines and `deactivateExcess`
 * was not asked, before anything is written.
 */
export async function limitToFit(
  store: Pick<LicenseStore, 'countActivations'>,
  doc: Pick<LicenseDoc, '_id' | 'policy'>,
  max: number | null,
  deactivateExcess: boolean,
): Promise<number | undefined> {
  if (max === null || max === doc.policy.max_activations) return undefined;
  const lowered = doc.policy.max_activations === null || max < doc.policy.max_activations;
  if (!lowered || deactivateExcess) return max;
  const inUse = await store.countActivations(doc._id);
  if (inUse > max)
    throw new AppError(
      'conflict',
      `max_activations ${max} is below the ${inUse} machines this licence is active on: deactivate ${inUse - max} first, or send "deactivate_excess": true to free the longest-unseen`,
    );
  return max;
}

/**
 * Brings a licence's machines within `max`: the longest-unseen freed (reason limit_lowered) until they
 * fit, then every remaining machine moved into a slot from 1 to max (the unique slot index is what holds
 * the limit for new activations: store/activation-queries.ts).
 */
export async function fitMachines(deps: LicenseDeps, licence: Omit<LicenseDoc, 'outbox'>, max: number): Promise<void> {
  for (let round = 0; round < FIT_ROUNDS; round++) {
    const excess = excessMachines(await deps.store.activeMachines(licence._id), max);
    if (!excess.length) break;
    for (const machine of excess) await freeActivation(deps, licence, machine._id, 'limit_lowered');
  }
  await deps.store.moveIntoSlots(licence._id, max);
}
