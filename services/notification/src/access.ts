import type { NotificationServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/**
 * Who may call what on the notification service: only the gateway (the mail log, a licence's e-mail
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
};
