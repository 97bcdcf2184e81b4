import { idempotent, type Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { last24Hours, last30Days } from '../domain/stats';
import type { ValidationCounter } from '../store/stats';
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
      const run = async () => present(await issueLicense(deps, req.accountId, input));
      if (!req.idempotencyKey) return run();
      return idempotent(
        store.models.Idempotency,
        `${req.accountId}:create_license`,
        req.idempotencyKey,
        input,
        run,
        clock.now(),
      );
    },

    async getLicense(req) {
      const { doc, activations, lastValidated } = await getLicense(store, counter, req.accountId, req.key);
      return {
        ...toLicense(doc, clock.now(), 'full', activations),
        lastValidatedAt: lastValidated?.toISOString() ?? '',
      };
    },

    async listLicenses(req) {
      const { items, page, now } = await listLicenses(deps, req.accountId, req, req.page);
      return { data: items.map((d) => toLicense(d, now)), page };
    },

    updateLicense: async (req) => present(await updateLicense(deps, req)),
    transitionLicense: async (req) => present(await transitionLicense(deps, req)),

    async getStats(req) {
      const now = clock.now();
      const { total, buckets } = await readStats(store, counter, req.accountId, now);
      return {
        licensesTotal: total,
        validationsByHour: last24Hours(buckets, now).map((b) => ({
          hour: b.hour.toISOString(),
          validations: b.validations,
          valid: b.valid,
          byCode: b.byCode,
        })),
        validationsByDay: last30Days(buckets, now).map((d) => ({
          day: d.day.toISOString(),
          validations: d.validations,
          valid: d.valid,
          byCode: d.byCode,
        })),
      };
    },
  };
}
