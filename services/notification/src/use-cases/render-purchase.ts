import { AppError } from '@licensing/runtime';
import { isReachable } from '../domain/portal';
import { LICENSE_FILE_NAME, portalUrl, purchaseMail, type RenderedMail } from '../domain/purchase-mail';
import type { EmailDoc } from '../store/emails';
import type { NotificationDeps } from './deps';

export interface PurchaseMail extends RenderedMail {
  vendorName: string;
  supportEmail: string;
  attachments: { filename: string; content: string; contentType: string }[];
}

/**
 * A mail that must not go out at all, whatever later attempts would meet: it fails at once with this
 * message. `to`, when given, replaces the address in the log (an erased customer's placeholder).
 */
export class Undeliverable extends Error {
  constructor(
    message: string,
    readonly to?: string,
  ) {
    super(message);
  }
}

export const ERASED_MESSAGE = 'the customer was erased';

/**
 * The licence's customer was erased (DELETE /api/v1/customers/{email}) after this mail was asked: an
 * event that arrived late (a checkout.completed or license.batch_completed the consumer read after
 * the erasure) carries the old address, but nothing is sent to it, and the log keeps the placeholder.
 */
export const unreachableLicence = (customerEmail: string) =>
  customerEmail
    ? new Undeliverable(ERASED_MESSAGE, customerEmail)
    : new Undeliverable('the licence has no customer e-mail any more: there is nobody to send it to');

/** Answers that mean "no licence file for this licence" (it needs a machine's fingerprint, or is not active): the mail goes without one. */
const NO_FILE = new Set(['invalid_request', 'conflict', 'forbidden']);

/**
 * The purchase e-mail of a queued mail, from what the owning services say now (over gRPC: no
 * service reads another's store). A service that does not answer fails the attempt, and the
 * mail is tried again later.
 */
export async function renderPurchase(deps: NotificationDeps, mail: EmailDoc): Promise<PurchaseMail> {
  if (!isReachable(mail.to)) throw new Undeliverable(ERASED_MESSAGE);
  const license = await deps.licenses.getLicense({ account_id: mail.account_id, key: mail.license_key });
  if (!isReachable(license.customer_email)) throw unreachableLicence(license.customer_email);
  const [account, product] = await Promise.all([
    deps.accounts.getAccount({ id: mail.account_id }),
    deps.products.getProduct({ account_id: mail.account_id, id: license.product_id }),
  ]);
  let file: { kid: string; algorithm: string; payload: string; signature: string } | undefined;
  try {
    file = await deps.licenses.issueLicenseFile({
      account_id: mail.account_id,
      key: mail.license_key,
      fingerprint: '',
      ttl_days: 0,
      key_scope: 'full', // mailed to the customer the licence is for
    });
  } catch (err) {
    if (!(err instanceof AppError && NO_FILE.has(err.code))) throw err;
  }
  const supportEmail = account.support_email ?? '';
  const rendered = purchaseMail({
    vendorName: account.name,
    supportEmail,
    productName: product.name,
    licenseKey: license.key,
    expiresAt: license.expires_at || null,
    portalUrl: portalUrl(deps.publicBaseUrl, mail.account_id),
    withLicenseFile: !!file,
  });
  return {
    ...rendered,
    vendorName: account.name,
    supportEmail,
    attachments: file
      ? [
          {
            filename: LICENSE_FILE_NAME,
            // The same JSON as POST /api/v1/licenses/{key}/file answers.
            content: JSON.stringify(
              { kid: file.kid, algorithm: file.algorithm, payload: file.payload, signature: file.signature },
              null,
              2,
            ),
            contentType: 'application/json',
          },
        ]
      : [],
  };
}
