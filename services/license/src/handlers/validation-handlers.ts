import {
  AppError,
  remainingMs,
  saneRequestId,
  withCallScope,
  type Handlers,
  type ServiceContext,
} from '@licensing/runtime';
import {
  judge,
  parseLicenseKey,
  verdictFields,
  type LicenseServiceService,
  type ValidateLicenseRequest,
  type ValidateLicenseResponse,
  type ValidationFacts,
} from '@licensing/proto';
import type { LicenseStore } from '../store/queries';
import type { ValidationCounter } from '../store/stats';
import type { LicenseConfig } from '../config';
import { toLicense } from './mapping';
import { isCode } from '../domain/stats';
import { ownLicense } from '../use-cases/read-licenses';
import { MAX_CACHED_FINGERPRINTS, type LicenseCache, type ValidationRecord } from '../events/license-cache';

type ValidationHandlers = Pick<
  Handlers<typeof LicenseServiceService>,
  'validateLicense' | 'validateLicenses' | 'recordValidations' | 'listRecentValidations'
>;

/** The most validations one ValidateLicenses call may carry. */
export const MAX_VALIDATIONS_PER_CALL = 256;

/** What a gateway needs to answer this key again from memory (activations listed only when they matter). */
function factsOf(
  { doc, fingerprints, rememberedSince }: ValidationRecord,
  accountId: string,
  now: Date,
): ValidationFacts {
  if (!doc || doc.account_id !== accountId)
    return {
      found: false,
      license: undefined,
      stored_status: '',
      activation_count: 0,
      active_fingerprints: [],
      cacheable: true,
      remembered_since: '',
    };
  return {
    found: true,
    license: toLicense(doc, now),
    stored_status: doc.status,
    activation_count: fingerprints.length,
    active_fingerprints: fingerprints.slice(0, MAX_CACHED_FINGERPRINTS),
    cacheable: fingerprints.length <= MAX_CACHED_FINGERPRINTS,
    remembered_since: rememberedSince === undefined ? '' : new Date(rememberedSince).toISOString(),
  };
}

/** The hot path: the licence (from this instance's cache, else one read by key, one more when the policy requires activation). */
export function validationHandlers(
  ctx: ServiceContext<LicenseConfig>,
  store: LicenseStore,
  licenses: Pick<LicenseCache, 'read'>,
  counter: ValidationCounter,
): ValidationHandlers {
  const byCode = ctx.metrics.counter('licensing_validations_total', ['code']);

  async function validateLicense(req: ValidateLicenseRequest): Promise<ValidateLicenseResponse> {
    const parsed = parseLicenseKey(req.key);
    const record: ValidationRecord = parsed.ok
      ? await licenses.read(parsed.key, req.from_store)
      : { doc: null, fingerprints: [] };
    const { doc } = record;
    const fingerprint = req.fingerprint.trim().slice(0, 200);
    const now = ctx.clock.now();
    const needsActivation = !!doc && doc.account_id === req.account_id && doc.policy.require_activation;
    const facts = req.want_facts && parsed.ok ? factsOf(record, req.account_id, now) : undefined;
    let activation = { fingerprintActive: false, count: 0 };
    if (needsActivation && record.fingerprints.length <= MAX_CACHED_FINGERPRINTS) {
      activation = {
        fingerprintActive: !!fingerprint && record.fingerprints.includes(fingerprint),
        count: record.fingerprints.length,
      };
    } else if (needsActivation) {
      const fingerprintActive = !!fingerprint && !!(await store.findActivation(doc._id, fingerprint));
      // Counted exactly, and only when the answer depends on it.
      activation = { fingerprintActive, count: fingerprintActive ? 0 : await store.countActivations(doc._id) };
    }
    const verdict = judge(
      parsed,
      doc,
      { accountId: req.account_id, productId: req.product_id, fingerprint },
      activation,
      now,
    );
    counter.record(req.account_id, verdict.code, verdict.valid, now);
    if (verdict.visible && doc) {
      counter.validated(req.account_id, doc._id, now);
      counter.saw({
        accountId: req.account_id,
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
      license: verdict.visible && doc ? toLicense(doc, now, req.key_scope) : undefined,
      facts,
    };
  }

  return {
    validateLicense,

    async validateLicenses(req) {
      if (req.validations.length > MAX_VALIDATIONS_PER_CALL)
        throw AppError.invalid('validations', `at most ${MAX_VALIDATIONS_PER_CALL} validations per call`);
      // Each in the scope of its own request (its logs and counts say which), under this call's deadline.
      const deadline = Date.now() + remainingMs();
      const results = await Promise.all(
        req.validations.map((v, i) => {
          const requestId = saneRequestId(req.request_ids[i]);
          return requestId ? withCallScope(requestId, deadline, () => validateLicense(v)) : validateLicense(v);
        }),
      );
      return { results };
    },

    async recordValidations(req) {
      for (const t of req.tallies) {
        const hour = new Date(t.hour);
        if (
          !t.account_id ||
          Number.isNaN(hour.getTime()) ||
          t.validations < 0 ||
          t.valid < 0 ||
          t.valid > t.validations
        )
          continue;
        // Codes come from a gateway's judge(); a malformed one is dropped (it would be a field path in the store).
        const byCode = Object.fromEntries(
          Object.entries(t.by_code).filter(([code, n]) => isCode(code) && Number.isInteger(n) && n > 0),
        );
        counter.add(t.account_id, hour, t.validations, t.valid, byCode);
      }
      for (const v of req.last_validated) {
        const at = new Date(v.at);
        if (v.account_id && v.license_id && !Number.isNaN(at.getTime()))
          counter.validated(v.account_id, v.license_id, at);
      }
      for (const g of req.seen) {
        const [hour, lastAt] = [new Date(g.hour), new Date(g.last_at)];
        if (
          !g.account_id ||
          !g.license_id ||
          !isCode(g.code) ||
          g.fingerprint.length > 200 ||
          g.count < 1 ||
          Number.isNaN(hour.getTime()) ||
          Number.isNaN(lastAt.getTime())
        )
          continue;
        counter.saw({
          accountId: g.account_id,
          licenseId: g.license_id,
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
      const doc = await ownLicense(store, req.account_id, req.key);
      const limit = req.limit >= 1 && req.limit <= 50 ? req.limit : 20;
      const groups = await counter.recent(doc._id, limit);
      return {
        data: groups.map((g) => ({
          hour: g.hour.toISOString(),
          code: g.code,
          fingerprint: g.fingerprint,
          count: g.count,
          last_at: g.lastAt.toISOString(),
        })),
      };
    },
  };
}
