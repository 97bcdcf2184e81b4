import { Email, type License, type NotificationServiceService } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';

// What the notification service answers about the mail log and a licence's mail sent again, over the
// licences and mails a test holds (arrays, as a store): SendLicenseEmail queues a mail to the licence's
// customer (another account's licence is not found), ListEmails pages the log newest first.

export function mailAnswers(licences: License[], mails: Email[]): FakeHandlers<typeof NotificationServiceService> {
  return {
    sendLicenseEmail: ({ account_id, key }) => {
      const licence = licences.find((l) => l.account_id === account_id && l.key === key);
      if (!licence) throw new AppError('not_found', 'licence not found');
      const mail = Email.fromPartial({
        id: newId('eml'),
        to: licence.customer_email,
        template: 'purchase',
        status: 'queued',
        license_key: licence.key,
        created_at: new Date().toISOString(),
        next_attempt_at: new Date().toISOString(),
      });
      mails.push(mail);
      return mail;
    },
    listEmails: ({ page }) => {
      const limit = page?.limit || 20;
      const newestFirst = [...mails].sort((a, b) => (a.id < b.id ? 1 : -1));
      const after = page?.starting_after ?? '';
      const rest = after ? newestFirst.filter((m) => m.id < after) : newestFirst;
      const data = rest.slice(0, limit);
      const more = rest.length > limit;
      return { data, page: { has_more: more, next_cursor: more ? data[data.length - 1].id : '' } };
    },
  };
}
