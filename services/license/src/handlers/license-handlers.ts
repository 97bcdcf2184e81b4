import { idempotent, type Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { last24Hours, last30Days } from '../domain/stats';
import type { ValidationCounter } from '../store/stats';
import { checkTransitionAllowed } from '../access';
import { transitionLicense, updateLicense } from '../use-cases/change-license';
import type { LicenseAt, LicenseDeps } from '../use-cases/deps';
import { checkNewLicense, issueLicense } from '../use-cases/issue-license';
import { getLicense, listLicenses, readStats } from '../use-cases/read-licenses';
import { toLicense } from './mapping';

type LicenseHandlers = Pick<
  Handlers<typeof LicenseServiceService>,
  'createLicense' | 'getLicense' | 'listLicenses' | 'updateLicense' | 'transitionLicense' | 'getStats'
>;

const present = ({ doc, now }: LicenseAt) => toLicense(doc, now);

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function licenseHandlers(deps: LicenseDeps, counter: ValidationCounter): LicenseHandlers {
  const { store, clock } = deps;
  return {
    async createLicense(req) {
      const input = checkNewLicense(req);
      const run = async () => present(await issueLicense(deps, req.account_id, input));
      if (!req.idempotency_key) return run();
      return idempotent(
        store.models.Idempotency,
        `${req.account_id}:create_license`,
        req.idempotency_key,
        input,
        run,
        clock.now(),
      );
    },

    async getLicense(req) {
      const { doc, activations, lastValidated } = await getLicense(store, counter, req.account_id, req.key);
      return {
        ...toLicense(doc, clock.now(), 'full', activations),
        last_validated_at: lastValidated?.toISOString() ?? '',
      };
    },

    async listLicenses(req) {
      const { items, page, now } = await listLicenses(deps, req.account_id, req, req.page);
      return { data: items.map((d) => toLicense(d, now)), page };
    },

    updateLicense: async (req) => present(await updateLicense(deps, req)),
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
