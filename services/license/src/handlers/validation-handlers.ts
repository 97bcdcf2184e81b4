import {
  AppError,
  asOwnCall,
  remainingMs,
  saneRequestId,
  type Handlers,
  type ServiceContext,
} from '@licensing/runtime';
import {
  MAX_VALIDATIONS_PER_CALL,
  verdictFields,
  type LicenseServiceService,
  type ValidateLicenseRequest,
  type ValidateLicenseResponse,
  type ValidationFacts,
} from '@licensing/proto';
import type { LicenseConfig } from '../config';
import { MAX_CACHED_FINGERPRINTS, type ValidationRecord } from '../caches/license-cache';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import type { ValidationCounter } from '../jobs/validation-counter';
import {
  recentValidations,
  recordGatewayValidations,
  validateLicense,
  type ValidationDeps,
} from '../use-cases/validate-license';
import { toLicense } from './mapping';

type ValidationHandlers = Pick<
  Handlers<typeof LicenseServiceService>,
  'validateLicense' | 'validateLicenses' | 'recordValidations' | 'listRecentValidations'
>;

/**
 * What a gateway needs to answer this key again from memory (activations listed only when they matter).
 * `doc`: the caller's licence with its product's current entitlements (null: none of the caller's).
 */
function factsOf(
  { fingerprints, leases, rememberedSince, retiredUntil }: ValidationRecord,
  doc: LicenseDoc | null,
  now: Date,
): ValidationFacts {
  if (!doc)
    return {
      found: false,
      license: undefined,
      stored_status: '',
      activation_count: 0,
      active_fingerprints: [],
      cacheable: true,
      remembered_since: '',
      active_lease_expires_at: [],
      retired_until: '',
    };
  return {
    found: true,
    license: toLicense(doc, now),
    stored_status: doc.status,
    activation_count: fingerprints.length,
    active_fingerprints: fingerprints.slice(0, MAX_CACHED_FINGERPRINTS),
    cacheable: fingerprints.length <= MAX_CACHED_FINGERPRINTS,
    remembered_since: rememberedSince === undefined ? '' : new Date(rememberedSince).toISOString(),
    active_lease_expires_at: fingerprints.slice(0, MAX_CACHED_FINGERPRINTS).map((f) => {
      const end = leases.get(f);
      return end === undefined ? '' : new Date(end).toISOString();
    }),
    retired_until: retiredUntil?.toISOString() ?? '',
  };
}

// Proto to use case and back; the rules live in use-cases/validate-license.ts and proto/rules.
export function validationHandlers(
  ctx: ServiceContext<LicenseConfig>,
  deps: ValidationDeps & { store: LicenseStore; counter: ValidationCounter },
): ValidationHandlers {
  const byCode = ctx.metrics.counter('licensing_validations_total', ['code']);

  async function validate(req: ValidateLicenseRequest): Promise<ValidateLicenseResponse> {
    const { parsed, record, license, verdict, now } = await validateLicense(deps, req);
    byCode.inc({ code: verdict.code });
    return {
      ...verdictFields(verdict),
      license: verdict.visible && license ? toLicense(license, now, req.key_scope) : undefined,
      facts: req.want_facts && parsed.ok ? factsOf(record, license, now) : undefined,
    };
  }

  return {
    validateLicense: validate,

    async validateLicenses(req) {
      if (req.validations.length > MAX_VALIDATIONS_PER_CALL)
        throw AppError.invalid('validations', `at most ${MAX_VALIDATIONS_PER_CALL} validations per call`);
      // Each in the scope of its own request (its logs, counts and trace say which), under this call's deadline.
      const deadline = Date.now() + remainingMs();
      const results = await Promise.all(
        req.validations.map((v, i) =>
          asOwnCall(
            ctx.tracing,
            'licensing.v1.LicenseService/ValidateLicense',
            { requestId: saneRequestId(req.request_ids[i]), traceparent: req.traceparents[i] },
            deadline,
            () => validate(v),
          ),
        ),
      );
      return { results };
    },

    async recordValidations(req) {
      recordGatewayValidations(deps.counter, req);
      return {};
    },

    async listRecentValidations(req) {
      const groups = await recentValidations(deps.store, deps.counter, req);
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
