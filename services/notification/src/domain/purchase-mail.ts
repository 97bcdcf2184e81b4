// The purchase e-mail: what a buyer receives after paying (or when the vendor
// sends a licence's e-mail through the API). Pure: unit tested
// (services/notification/test/unit/notification-mail.test.ts). The HTML part is written with html`…`
// of @licensing/runtime, which escapes every string a vendor or a buyer gave; the text part is plain text.
import { html, nothing } from '@licensing/runtime';
import { mailDocument, supportLine } from './mail-html';

export interface PurchaseFacts {
  /** The vendor's account name: the sender's display name and the greeting. */
  vendorName: string;
  /** Where the buyer writes for help ('' when the vendor has not set one). */
  supportEmail: string;
  productName: string;
  licenseKey: string;
  /** ISO date-time, or null for a licence that never expires. */
  expiresAt: string | null;
  /** The vendor's customer portal. */
  portalUrl: string;
  /** Whether the signed licence file is attached. */
  withLicenseFile: boolean;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** The sender's display name must not break out of its quotes, nor carry a line break into the headers. */
export const displayName = (s: string): string =>
  s
    .replace(/[\r\n\t"\\<>]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100);

/** The name of the attached licence file. */
export const LICENSE_FILE_NAME = 'license.json';

const expiryText = (expiresAt: string | null) => (expiresAt ? expiresAt.slice(0, 10) : 'never');

export function purchaseMail(f: PurchaseFacts): RenderedMail {
  const subject = `Your licence key for ${f.productName}`.replace(/[\r\n]+/g, ' ');
  const expiry = expiryText(f.expiresAt);
  const lines = [
    `Thank you for buying ${f.productName} from ${f.vendorName}.`,
    '',
    `Licence key: ${f.licenseKey}`,
    `Product: ${f.productName}`,
    `Expires: ${expiry}`,
    '',
    `Your licences and machines: ${f.portalUrl}`,
    ...(f.withLicenseFile ? ['', `The signed licence file is attached (${LICENSE_FILE_NAME}).`] : []),
    ...(f.supportEmail ? ['', `Questions? Write to ${f.supportEmail}.`] : []),
    '',
    `— ${f.vendorName}`,
  ];
  const mailHtml = mailDocument(
    subject,
    html`<p>Thank you for buying <strong>${f.productName}</strong> from ${f.vendorName}.</p>
<table role="presentation">
<tr><th align="left">Licence key</th><td><code>${f.licenseKey}</code></td></tr>
<tr><th align="left">Product</th><td>${f.productName}</td></tr>
<tr><th align="left">Expires</th><td>${expiry}</td></tr>
</table>
<p><a href="${f.portalUrl}">Your licences and machines</a></p>
${f.withLicenseFile ? html`<p>The signed licence file is attached (${LICENSE_FILE_NAME}).</p>\n` : nothing}${supportLine(f.supportEmail)}<p>— ${f.vendorName}</p>`,
  );
  return { subject, text: lines.join('\n'), html: mailHtml };
}

/** The vendor's customer portal (`/portal/{account_id}` of the gateway's public address). */
export const portalUrl = (publicBaseUrl: string, accountId: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/portal/${encodeURIComponent(accountId)}`;
