import type { LicenseServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the licence service: checkout only issues a licence for a paid session and may revoke it again. */
export const licenseAccess: AccessPolicyOf<typeof LicenseServiceService> = {
  gateway: [
    'createLicense',
    'getLicense',
    'listLicenses',
    'validateLicense',
    'validateLicenses',
    'getStats',
    'listRecentValidations',
    'transitionLicense',
    'updateLicense',
    'activate',
    'listActivations',
    'deactivate',
    'issueLicenseFile',
    'recordValidations',
  ],
  checkout: ['createLicense', 'transitionLicense'],
};
