import {
  DEFAULT_SIGNIN_MAILS_PER_HOUR,
  PORTAL_LINK_TTL_MS,
  SIGNIN_MAILS_WINDOW_MS,
  digestSecret,
  isReachable,
  newSecret,
  portalLinkUrl,
} from '../domain/portal';
import { portalLinkMail, seatRescueMail } from '../domain/portal-mail';
import type { EmailDoc } from '../store/emails';
import type { NotificationDeps } from './deps';
import { unreachableLicence, type PurchaseMail as ReadyMail } from './render-purchase';

/** Whether an address holds a licence of the account: one indexed read of the licence service (HoldsLicences). */
async function holdsLicences(deps: NotificationDeps, accountId: string, email: string): Promise<boolean> {
  return (await deps.licenses.holdsLicences({ account_id: accountId, email })).holds;
}

/**
 * A fresh one-time link for this attempt of the mail: only its digest is stored, and it replaces
 * the previous attempt's, so the raw token lives only in memory and in the mail sent, and only
 * the last link sent works.
 */
async function freshLink(deps: NotificationDeps, mail: EmailDoc): Promise<string> {
  const token = newSecret();
  const now = deps.clock.now();
  await deps.portal.putLink({
    _id: mail._id,
    token_digest: digestSecret(token),
    account_id: mail.account_id,
    email: mail.to,
    license_key: mail.license_key,
    expires_at: new Date(now.getTime() + PORTAL_LINK_TTL_MS),
    created_at: now,
  });
  return portalLinkUrl(deps.publicBaseUrl, mail.account_id, token);
}

/**
 * The sign-in or seat rescue mail of a queued request, decided now: null when there is nobody to
 * send it to (a sign-in for an address that holds no licence of the account, or an erased
 * customer), and the request is then dropped unsent and unlogged. Deciding here, not when asked,
 * keeps the portal's answer the same for every address.
 */
export async function renderPortalMail(deps: NotificationDeps, mail: EmailDoc): Promise<ReadyMail | null> {
  if (!isReachable(mail.to)) return null;
  if (mail.template === 'portal_link') {
    if (!(await holdsLicences(deps, mail.account_id, mail.to))) return null;
    // Enough links went to this address within the hour (the latest of them works): this one is dropped.
    const since = new Date(deps.clock.now().getTime() - SIGNIN_MAILS_WINDOW_MS);
    const limit = deps.signInMailsPerHour ?? DEFAULT_SIGNIN_MAILS_PER_HOUR;
    if ((await deps.emails.signInsSentSince(mail.account_id, mail.to, since)) >= limit) return null;
    // A customer's: from now on the request may show in the vendor's mail log (with its attempts).
    if (mail.recipient_confirmed !== true) await deps.emails.confirmRecipient(mail._id);
    const account = await deps.accounts.getAccount({ id: mail.account_id });
    const supportEmail = account.support_email ?? '';
    const linkUrl = await freshLink(deps, mail);
    return {
      ...portalLinkMail({ vendorName: account.name, supportEmail, linkUrl }),
      vendorName: account.name,
      supportEmail,
      attachments: [],
    };
  }
  const license = await deps.licenses.getLicense({ account_id: mail.account_id, key: mail.license_key });
  if (!isReachable(license.customer_email)) throw unreachableLicence(license.customer_email);
  const [account, product] = await Promise.all([
    deps.accounts.getAccount({ id: mail.account_id }),
    deps.products.getProduct({ account_id: mail.account_id, id: license.product_id }),
  ]);
  const supportEmail = account.support_email ?? '';
  const linkUrl = await freshLink(deps, mail);
  return {
    ...seatRescueMail({
      vendorName: account.name,
      supportEmail,
      linkUrl,
      productName: product.name,
      licenseKey: license.key,
    }),
    vendorName: account.name,
    supportEmail,
    attachments: [],
  };
}
