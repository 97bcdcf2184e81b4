import type { NotificationServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the notification service: only the gateway (the mail log, and a licence's e-mail asked for through the API). */
export const notificationAccess: AccessPolicyOf<typeof NotificationServiceService> = {
  gateway: ['listEmails', 'sendLicenseEmail'],
};
