import { AppError, isId, newId } from '@licensing/runtime';
import { effectiveStatus, type DomainEvent, type PageRequest } from '@licensing/proto';
import { checkFingerprint } from '../domain/metadata';
import { activationEvent } from '../events/license-events';
import type { ActivationDoc } from '../store/models';
import type { LicenseDeps } from './deps';
import { withLiveEntitlements } from './product-entitlements';
import { ownLicense } from './read-licenses';

/** Activates a machine on an active licence within its max_activations; an active fingerprint is answered again. */
export async function activate(
  { store, outbox, clock, products }: LicenseDeps,
  req: { account_id: string; key: string; fingerprint: string; name: string },
): Promise<{ activation: ActivationDoc; created: boolean }> {
  const fingerprint = checkFingerprint(req.fingerprint);
  const name = req.name.trim();
  if (name.length > 100) throw AppError.invalid('name', 'name must be at most 100 characters');
  const license = await ownLicense(store, req.account_id, req.key);
  // Retries from client apps are normal: an active fingerprint is simply returned.
  const existing = await store.findActivation(license._id, fingerprint);
  if (existing) return { activation: existing, created: false };
  const now = clock.now();
  const status = effectiveStatus(license, now);
  if (status !== 'active') throw new AppError('conflict', `the licence is ${status}: it cannot be activated`);
  const doc = {
    _id: newId('act'),
    license_id: license._id,
    account_id: req.account_id,
    fingerprint,
    name,
    fingerprint_key: fingerprint,
    created_at: now,
    deactivated_at: null,
  };
  // Announced with the product's current entitlements (domain/entitlements.ts).
  const announced = await withLiveEntitlements(products, license);
  const events = [activationEvent('license.activated', announced, { ...doc, slot_key: '' }, now)];
  const out = await store.activate(doc, license.policy.max_activations, events);
  if (!out)
    throw new AppError(
      'conflict',
      `activation_limit_reached: the licence is already active on ${license.policy.max_activations} machines; deactivate one first`,
    );
  if (out === 'contended')
    throw new AppError('conflict', 'other machines are being activated on this licence at this moment; retry');
  if (out.created) outbox.flush(store.models.Activation, out.activation._id, events);
  return out;
}

/** The active machines of one licence of this account. */
export async function listActivations(
  { store }: Pick<LicenseDeps, 'store'>,
  accountId: string,
  key: string,
  page: PageRequest | undefined,
) {
  const license = await ownLicense(store, accountId, key);
  return store.listActivations(license._id, page);
}

/** Frees a machine's slot, with license.deactivated; an unknown or already freed activation is not found. */
export async function deactivate(
  { store, outbox, clock, products }: LicenseDeps,
  accountId: string,
  key: string,
  activationId: string,
): Promise<ActivationDoc> {
  const license = await ownLicense(store, accountId, key);
  if (!isId('act', activationId)) throw AppError.notFound('activation');
  const now = clock.now();
  const events: DomainEvent[] = [];
  const announced = await withLiveEntitlements(products, license);
  const done = await store.deactivate(license._id, activationId, now, (a) => {
    events.push(activationEvent('license.deactivated', announced, a, now));
    return events[0];
  });
  if (!done) throw AppError.notFound('activation');
  outbox.flush(store.models.Activation, done._id, events);
  return done;
}
