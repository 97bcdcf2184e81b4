import { refundActions, type LicenseServiceService } from '@licensing/proto';
import { AppError, type AccessPolicyOf, type InternalCaller } from '@licensing/runtime';

/** Who may call what on the licence service: checkout only issues a licence for a paid session and may revoke it again. */
export const licenseAccess: AccessPolicyOf<typeof LicenseServiceService> = {
  gateway: [
    'createLicense',
    'getLicense',
    'listLicenses',
    'validateLicense',
    'validateLicenses',
    'transitionLicense',
    'updateLicense',
    'deleteLicense',
    'activate',
    'listActivations',
    'deactivate',
    'heartbeat',
    'issueLicenseFile',
    'recordValidations',
    'resolveLicenseKey',
    // DELETE /api/v1/customers/{email}.
    'eraseCustomer',
    // POST /api/v1/licenses/{key}/reroll, POST /api/v1/licenses/batch and its job.
    'rerollLicense',
    'createLicenseBatch',
    'getLicenseBatch',
  ],
  // ... and make the licence of a subscription follow it (applySubscription).
  checkout: ['createLicense', 'transitionLicense', 'applySubscription'],
  // The licence (expiry) and its signed licence file, for the purchase e-mail; whether an address
  // holds licences of the account (yes or no: it may not list any account's licences), before a portal
  // sign-in link is sent. And a finished licence batch's items, to mail those sent with send_email.
  notification: ['getLicense', 'issueLicenseFile', 'holdsLicences', 'getLicenseBatch'],
  // Whether a product has licences (yes or no), before the product service deletes it.
  product: ['hasLicenses'],
  // The web component: the dashboard's licences (and bulk issuance), the customer portal's licences and
  // files; and validation, never counted (already_counted), for the releases a licence may download.
  web: [
    'createLicense',
    'createLicenseBatch',
    'getLicenseBatch',
    'getLicense',
    'listLicenses',
    'updateLicense',
    'transitionLicense',
    'rerollLicense',
    'listActivations',
    'deactivate',
    'deactivateForCustomer',
    'issueLicenseFile',
    'getStats',
    'listRecentValidations',
    'validateLicense',
  ],
};

/**
 * Which transitions a caller may make with transitionLicense (absent: every one). Checkout acts only on a
 * refund or a chargeback, by the product's refund_action: it may revoke or suspend, never reinstate or
 * renew (a compromised checkout could otherwise bring back any licence it can name).
 */
export const transitionsAllowed: Partial<Record<InternalCaller, readonly string[]>> = {
  checkout: refundActions,
};

/** Refuses (forbidden: PERMISSION_DENIED) a transition the caller may not make. */
export function checkTransitionAllowed(caller: InternalCaller | undefined, action: string): void {
  const allowed = caller ? transitionsAllowed[caller] : undefined;
  if (allowed && !allowed.includes(action))
    throw new AppError('forbidden', `${caller} may not ${action} a licence (only ${allowed.join(', ')})`);
}
