import type { NotificationServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/**
 * Who may call what on the notification service: the gateway and the web component (the mail log, a licence's e-mail
 * asked for through the API, the customer portal's sign-in and sessions, seat rescue, and erasure).
 */
export const notificationAccess: AccessPolicyOf<typeof NotificationServiceService> = {
  gateway: [
    'listEmails',
    'sendLicenseEmail',
    'requestPortalLink',
    'requestSeatRescue',
    'redeemPortalLink',
    'getPortalSession',
    'endPortalSession',
    'eraseCustomer',
  ],
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
