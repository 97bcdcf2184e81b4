import type { Handlers, ServiceContext } from '@licensing/runtime';
import {
  judge,
  parseLicenseKey,
  verdictFields,
  type LicenseServiceService,
  type ValidationFacts,
} from '@licensing/proto';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import type { ValidationCounter } from '../store/stats';
import type { LicenseConfig } from '../config';
import { toLicense } from './mapping';
import { isCode } from '../domain/stats';
import { ownLicense } from '../use-cases/read-licenses';

/** A gateway caches a licence with at most this many active machines; beyond, it asks every time. */
export const MAX_CACHED_FINGERPRINTS = 100;

type ValidationHandlers = Pick<
  Handlers<typeof LicenseServiceService>,
  'validateLicense' | 'recordValidations' | 'listRecentValidations'
>;

/** The hot path: one read by key, one more only when the policy requires activation. */
export function validationHandlers(
  ctx: ServiceContext<LicenseConfig>,
  store: LicenseStore,
  counter: ValidationCounter,
): ValidationHandlers {
  const byCode = ctx.metrics.counter('licensing_validations_total', ['code']);

  /** What a gateway needs to answer this key again from memory (activations listed only when they matter). */
  async function factsOf(doc: LicenseDoc | null, accountId: string, now: Date): Promise<ValidationFacts> {
    if (!doc || doc.account_id !== accountId)
      return {
        found: false,
        license: undefined,
        storedStatus: '',
        activationCount: 0,
        activeFingerprints: [],
        cacheable: true,
      };
    const fingerprints = doc.policy.require_activation
      ? await store.activeFingerprints(doc._id, MAX_CACHED_FINGERPRINTS + 1)
      : [];
    return {
      found: true,
      license: toLicense(doc, now),
      storedStatus: doc.status,
      activationCount: fingerprints.length,
      activeFingerprints: fingerprints.slice(0, MAX_CACHED_FINGERPRINTS),
      cacheable: fingerprints.length <= MAX_CACHED_FINGERPRINTS,
    };
  }

  return {
    async validateLicense(req) {
      const parsed = parseLicenseKey(req.key);
      const doc = parsed.ok ? await store.findByKey(parsed.key) : null;
      const fingerprint = req.fingerprint.trim().slice(0, 200);
      const now = ctx.clock.now();
      const needsActivation = !!doc && doc.account_id === req.accountId && doc.policy.require_activation;
      const facts = req.wantFacts && parsed.ok ? await factsOf(doc, req.accountId, now) : undefined;
      let activation = { fingerprintActive: false, count: 0 };
      if (facts?.cacheable && needsActivation) {
        activation = {
          fingerprintActive: !!fingerprint && facts.activeFingerprints.includes(fingerprint),
          count: facts.activationCount,
        };
      } else if (needsActivation) {
        const fingerprintActive = !!fingerprint && !!(await store.findActivation(doc._id, fingerprint));
        // Counted exactly, and only when the answer depends on it.
        activation = { fingerprintActive, count: fingerprintActive ? 0 : await store.countActivations(doc._id) };
      }
      const verdict = judge(
        parsed,
        doc,
        { accountId: req.accountId, productId: req.productId, fingerprint },
        activation,
        now,
      );
      counter.record(req.accountId, verdict.code, verdict.valid, now);
      if (verdict.visible && doc) {
        counter.validated(req.accountId, doc._id, now);
        counter.saw({
          accountId: req.accountId,
          licenseId: doc._id,
          hour: now,
          code: verdict.code,
          fingerprint,
          count: 1,
          lastAt: now,
        });
      }
      byCode.inc({ code: verdict.code });
      return {
        ...verdictFields(verdict),
        license: verdict.visible && doc ? toLicense(doc, now, req.keyScope) : undefined,
        facts,
      };
    },

    async recordValidations(req) {
      for (const t of req.tallies) {
        const hour = new Date(t.hour);
        if (!t.accountId || Number.isNaN(hour.getTime()) || t.validations < 0 || t.valid < 0 || t.valid > t.validations)
          continue;
        // Codes come from a gateway's judge(); a malformed one is dropped (it would be a field path in the store).
        const byCode = Object.fromEntries(
          Object.entries(t.byCode).filter(([code, n]) => isCode(code) && Number.isInteger(n) && n > 0),
        );
        counter.add(t.accountId, hour, t.validations, t.valid, byCode);
      }
      for (const v of req.lastValidated) {
        const at = new Date(v.at);
        if (v.accountId && v.licenseId && !Number.isNaN(at.getTime())) counter.validated(v.accountId, v.licenseId, at);
      }
      for (const g of req.seen) {
        const [hour, lastAt] = [new Date(g.hour), new Date(g.lastAt)];
        if (
          !g.accountId ||
          !g.licenseId ||
          !isCode(g.code) ||
          g.fingerprint.length > 200 ||
          g.count < 1 ||
          Number.isNaN(hour.getTime()) ||
          Number.isNaN(lastAt.getTime())
        )
          continue;
        counter.saw({
          accountId: g.accountId,
          licenseId: g.licenseId,
          hour,
          code: g.code,
          fingerprint: g.fingerprint,
          count: g.count,
          lastAt,
        });
      }
      return {};
    },

    async listRecentValidations(req) {
      const doc = await ownLicense(store, req.accountId, req.key);
      const limit = req.limit >= 1 && req.limit <= 50 ? req.limit : 20;
      const groups = await counter.recent(doc._id, limit);
      return {
        data: groups.map((g) => ({
          hour: g.hour.toISOString(),
          code: g.code,
          fingerprint: g.fingerprint,
          count: g.count,
          lastAt: g.lastAt.toISOString(),
        })),
      };
    },
  };
}
