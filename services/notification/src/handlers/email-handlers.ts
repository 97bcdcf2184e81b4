import { AppError, type Handlers } from '@licensing/runtime';
import type { Email, NotificationServiceService } from '@licensing/proto';
import type { EmailDoc } from '../store/emails';
import type { NotificationDeps } from '../use-cases/deps';
import { listEmails, sendLicenseEmail } from '../use-cases/emails';

const toEmail = (d: EmailDoc): Email => ({
  id: d._id,
  to: d.to,
  template: d.template,
  subject: d.subject,
  status: d.status,
  attempts: d.attempts,
  last_error: d.last_error ?? '',
  next_attempt_at: d.next_attempt_at ? d.next_attempt_at.toISOString() : '',
  created_at: d.created_at.toISOString(),
  sent_at: d.sent_at ? d.sent_at.toISOString() : '',
  license_key: d.license_key,
});

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function emailHandlers(deps: NotificationDeps): Handlers<typeof NotificationServiceService> {
  return {
    async listEmails(req) {
      const { items, page } = await listEmails(deps, req.account_id, req.page);
      return { data: items.map(toEmail), page };
    },
    sendLicenseEmail: async (req) => toEmail(await sendLicenseEmail(deps, req.account_id, req.key, req.dedupe_key)),
    // TODO(i28 base): built by the notification helper
    requestPortalLink: async () => {
      throw new AppError('method_not_allowed', 'not built yet');
    },
    requestSeatRescue: async () => {
      throw new AppError('method_not_allowed', 'not built yet');
    },
    redeemPortalLink: async () => {
      throw new AppError('method_not_allowed', 'not built yet');
    },
    getPortalSession: async () => {
      throw new AppError('method_not_allowed', 'not built yet');
    },
    endPortalSession: async () => {
      throw new AppError('method_not_allowed', 'not built yet');
    },
    eraseCustomer: async () => {
      throw new AppError('method_not_allowed', 'not built yet');
    },
  };
}
