import { AppError, newId } from '@licensing/runtime';
import type { PageRequest } from '@licensing/proto';
import { isReachable } from '../domain/portal';
import { queuedPurchaseMail, type EmailDoc } from '../store/emails';
import type { NotificationDeps } from './deps';

/** The mail log of an account, newest first. */
export const listEmails = (deps: NotificationDeps, accountId: string, page: PageRequest | undefined) =>
  deps.emails.list(accountId, page);

/**
 * Queues a licence's purchase e-mail again, to its customer_email (POST /api/v1/licenses/{key}/email,
 * and the dashboard's "send again"). Only queued here: the sender job sends it, so a crash after the
 * answer loses nothing. (`send_email` on a create or reroll is asked on the licence's event instead:
 * events/mail-requests.ts, LicenseMailRequests.) The licence is looked up first, scoped by account: another
 * account's licence is not found.
 */
export async function sendLicenseEmail(
  deps: NotificationDeps,
  accountId: string,
  key: string,
  dedupeKey = '',
): Promise<EmailDoc> {
  const license = await deps.licenses.getLicense({ account_id: accountId, key });
  // No address, or an erased customer's placeholder: 409, as for a seat rescue (nothing is queued to fail).
  if (!isReachable(license.customer_email))
    throw new AppError(
      'conflict',
      license.customer_email
        ? 'the customer of this licence was erased: there is nobody to send it to'
        : 'the licence has no customer_email: there is nobody to send it to',
    );
  const now = deps.clock.now();
  const id = newId('eml');
  const doc = queuedPurchaseMail(
    {
      _id: id,
      request_key: dedupeKey ? `api:${accountId}:${dedupeKey}` : `api:${id}`,
      account_id: accountId,
      to: license.customer_email,
      license_key: license.key,
    },
    now,
  );
  if (await deps.emails.record(doc)) return doc;
  // A retried request: the mail its first try queued.
  return (await deps.emails.byRequestKey(accountId, doc.request_key)) ?? doc;
}
