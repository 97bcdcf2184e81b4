import { AppError, idempotent, newId, type Handlers, type InternalCaller } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { last24Hours, last30Days } from '../domain/stats';
import type { ValidationCounter } from '../jobs/validation-counter';
import { checkTransitionAllowed } from '../access';
import { transitionLicense, updateLicense } from '../use-cases/change-license';
import type { LicenseAt, LicenseDeps } from '../use-cases/deps';
import { checkNewLicense, issueLicense } from '../use-cases/issue-license';
import { applySubscription } from '../use-cases/apply-subscription';
import { deleteLicense } from '../use-cases/delete-license';
import { getLicense, holdsLicences, listLicenses, readStats, resolveLicenseKey } from '../use-cases/read-licenses';
import { toLicense } from './mapping';

type LicenseHandlers = Pick<
  Handlers<typeof LicenseServiceService>,
  | 'createLicense'
  | 'getLicense'
  | 'listLicenses'
  | 'holdsLicences'
  | 'updateLicense'
  | 'deleteLicense'
  | 'transitionLicense'
  | 'getStats'
  | 'resolveLicenseKey'
  | 'applySubscription'
>;

const present = ({ doc, now }: LicenseAt) => toLicense(doc, now);

/**
 * Where a createLicense Idempotency-Key lives. The gateway's (REST clients') keep the namespace they always
 * had; each internal caller has its own, so a REST client of the account can neither replay nor block the
 * checkout service's issuance (its keys are `checkout:<session id>`) by sending the same key.
 */
export function createLicenseScope(accountId: string, caller: InternalCaller): string {
  return caller === 'gateway' ? `${accountId}:create_license` : `${accountId}:${caller}:create_license`;
}

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function licenseHandlers(deps: LicenseDeps, counter: ValidationCounter): LicenseHandlers {
  const { store, clock } = deps;
  return {
    async createLicense(req, call) {
      // Only a recurring checkout issues a licence for a subscription.
      if (req.subscription_id && call.caller !== 'checkout')
        throw AppError.invalid('subscription_id', 'only the checkout service issues a licence for a subscription');
      const input = checkNewLicense(req, clock.now());
      if (!req.idempotency_key) return present(await issueLicense(deps, req.account_id, input));
      return idempotent(
        store.models.Idempotency,
        createLicenseScope(req.account_id, call.caller),
        req.idempotency_key,
        input,
        async ({ resultId, resumed }) =>
          present(await issueLicense(deps, req.account_id, input, { licenseId: resultId, resumed })),
        { now: clock.now(), resultId: () => newId('lic', clock.now().getTime()) },
      );
    },

    async getLicense(req) {
      const { doc, activations, lastValidated } = await getLicense(deps, counter, req.account_id, req.key);
      return {
        ...toLicense(doc, clock.now(), 'full', activations),
        last_validated_at: lastValidated?.toISOString() ?? '',
      };
    },

    async listLicenses(req) {
      const { items, page, now } = await listLicenses(deps, req.account_id, req, req.page);
      return { data: items.map((d) => toLicense(d, now)), page };
    },

    holdsLicences: async (req) => ({ holds: await holdsLicences(deps, req.account_id, req.email) }),

    resolveLicenseKey: (req) => resolveLicenseKey(store, req.key, deps.retired, clock.now()),

    updateLicense: async (req) => present(await updateLicense(deps, req)),
    deleteLicense: async (req) => present(await deleteLicense(deps, req)),
    applySubscription: async (req) => present(await applySubscription(deps, req)),
    async transitionLicense(req, call) {
      checkTransitionAllowed(call.caller, req.action);
      return present(await transitionLicense(deps, req));
    },

    async getStats(req) {
      const now = clock.now();
      const { total, buckets } = await readStats(store, counter, req.account_id, now);
      return {
        licenses_total: total,
        validations_by_hour: last24Hours(buckets, now).map((b) => ({
          hour: b.hour.toISOString(),
          validations: b.validations,
          valid: b.valid,
          by_code: b.byCode,
        })),
        validations_by_day: last30Days(buckets, now).map((d) => ({
          day: d.day.toISOString(),
          validations: d.validations,
          valid: d.valid,
          by_code: d.byCode,
        })),
      };
    },
  };
}
