import type { Handlers, ServiceContext } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { parseLicenseKey } from '../domain/license-key';
import { judge } from '../domain/validation';
import type { LicenseStore } from '../store/queries';
import type { ValidationCounter } from '../store/stats';
import type { LicenseConfig } from '../config';
import { toLicense } from './mapping';

/** The hot path: one read by key, one more only when the policy requires activation. */
export function validationHandlers(ctx: ServiceContext<LicenseConfig>, store: LicenseStore, counter: ValidationCounter): Pick<Handlers<typeof LicenseServiceService>, 'validateLicense'> {
  const byCode = ctx.metrics.counter('licensing_validations_total', ['code']);
  return {
    async validateLicense(req) {
      const parsed = parseLicenseKey(req.key);
      const doc = parsed.ok ? await store.findByKey(parsed.key) : null;
      const fingerprint = req.fingerprint.trim().slice(0, 200);
      const needsActivation = !!doc && doc.account_id === req.accountId && doc.policy.require_activation;
      const fingerprintActive = needsActivation && !!fingerprint && !!(await store.findActivation(doc._id, fingerprint));
      // Counted exactly, and only when the answer depends on it.
      const count = needsActivation && !fingerprintActive ? await store.countActivations(doc._id) : 0;
      const activation = { fingerprintActive, count };
      const now = ctx.clock.now();
      const verdict = judge(parsed, doc, { accountId: req.accountId, productId: req.productId, fingerprint }, activation, now);
      counter.record(req.accountId, verdict.valid, now);
      byCode.inc({ code: verdict.code });
      return {
        valid: verdict.valid,
        code: verdict.code,
        detail: verdict.detail,
        nextAction: verdict.nextAction,
        cacheUntil: verdict.cacheUntil.toISOString(),
        license: verdict.visible && doc ? toLicense(doc, now, req.keyScope) : undefined,
      };
    },
  };
}
