import type { NotificationServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/**
 * Who may call what on the notification service: the gateway (the API) and the web component (the
 * dashboard's mail log, the customer portal's sign-in and sessions). Only the web component signs a
 * customer in to the portal.
 */
export const notificationAccess: AccessPolicyOf<typeof NotificationServiceService> = {
  // The API: the mail log, a licence's e-mail, seat rescue and erasure.
  gateway: ['listEmails', 'sendLicenseEmail', 'requestSeatRescue', 'eraseCustomer'],
  // The web component: the dashboard's mail log and licence e-mails, the customer portal's sign-in and sessions.
  web: [
    'listEmails',
    'sendLicenseEmail',
    'requestPortalLink',
    'redeemPortalLink',
    'getPortalSession',
    'endPortalSession',
  ],
};
