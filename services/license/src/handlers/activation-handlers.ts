import { AppError, isId, newId, type Handlers, type ServiceContext } from '@licensing/runtime';
import { effectiveStatus, type LicenseServiceService } from '@licensing/proto';
import { checkFingerprint } from '../domain/metadata';
import { activationEvent } from '../events/license-events';
import type { LicenseStore } from '../store/queries';
import type { LicenseConfig } from '../config';
import { ownLicense } from './license-handlers';
import { toActivation } from './mapping';

export function activationHandlers(
  ctx: ServiceContext<LicenseConfig>,
  store: LicenseStore,
): Pick<Handlers<typeof LicenseServiceService>, 'activate' | 'listActivations' | 'deactivate'> {
  return {
    async activate(req) {
      const fingerprint = checkFingerprint(req.fingerprint);
      const name = req.name.trim();
      if (name.length > 100) throw AppError.invalid('name', 'name must be at most 100 characters');
      const license = await ownLicense(store, req.accountId, req.key);
      // Retries from client apps are normal: an active fingerprint is simply returned.
      const existing = await store.findActivation(license._id, fingerprint);
      if (existing) return { activation: toActivation(existing), created: false };
      const now = ctx.clock.now();
      const status = effectiveStatus(license, now);
      if (status !== 'active') throw new AppError('conflict', `the licence is ${status}: it cannot be activated`);
      const doc = {
        _id: newId('act'),
        license_id: license._id,
        account_id: req.accountId,
        fingerprint,
        name,
        fingerprint_key: fingerprint,
        created_at: now,
        deactivated_at: null,
      };
      const out = await store.activate(doc, license.policy.max_activations, [
        activationEvent('license.activated', license, { ...doc, slot_key: '' }, now),
      ]);
      if (!out)
        throw new AppError(
          'conflict',
          `activation_limit_reached: the licence is already active on ${license.policy.max_activations} machines; deactivate one first`,
        );
      if (out === 'contended')
        throw new AppError('conflict', 'other machines are being activated on this licence at this moment; retry');
      if (out.created) ctx.outbox.flush(store.models.Activation, out.activation._id);
      return { activation: toActivation(out.activation), created: out.created };
    },

    async listActivations(req) {
      const license = await ownLicense(store, req.accountId, req.key);
      const { items, page } = await store.listActivations(license._id, req.page);
      return { data: items.map(toActivation), page };
    },

    async deactivate(req) {
      const license = await ownLicense(store, req.accountId, req.key);
      if (!isId('act', req.activationId)) throw AppError.notFound('activation');
      const now = ctx.clock.now();
      const done = await store.deactivate(license._id, req.activationId, now, (a) =>
        activationEvent('license.deactivated', license, a, now),
      );
      if (!done) throw AppError.notFound('activation');
      ctx.outbox.flush(store.models.Activation, done._id);
      return toActivation(done);
    },
  };
}
