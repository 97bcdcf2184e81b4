// The customer portal's mails: the sign-in link a customer asked for, and the seat
// rescue an app asked for when every seat of a licence was taken. Pure: unit tested
// (services/notification/test/unit/notification-portal.test.ts). The HTML part is written with html`…`
// of @licensing/runtime, which escapes every vendor string; subjects carry no line break.
import { type Html, html } from '@licensing/runtime';
import { mailDocument, supportLine } from './mail-html';
import type { RenderedMail } from './purchase-mail';

export interface PortalLinkFacts {
  /** The vendor's account name. */
  vendorName: string;
  /** Where the customer writes for help ('' when the vendor has not set one). */
  supportEmail: string;
  /** The one-time sign-in link (portalLinkUrl). */
  linkUrl: string;
}

export interface SeatRescueFacts extends PortalLinkFacts {
  productName: string;
  licenseKey: string;
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ');

const VALIDITY = 'The link works once, within one hour. If you did not ask for it, ignore this mail: nothing changes.';

function assemble(
  subject: string,
  textIntro: string[],
  htmlIntro: Html,
  action: string,
  f: PortalLinkFacts,
): RenderedMail {
  const text = [
    ...textIntro,
    '',
    `${action}: ${f.linkUrl}`,
    '',
    VALIDITY,
    ...(f.supportEmail ? ['', `Questions? Write to ${f.supportEmail}.`] : []),
    '',
    `— ${f.vendorName}`,
  ].join('\n');
  const mailHtml = mailDocument(
    subject,
    html`${htmlIntro}
<p><a href="${f.linkUrl}">${action}</a></p>
<p>${VALIDITY}</p>
${supportLine(f.supportEmail)}<p>— ${f.vendorName}</p>`,
  );
  return { subject, text, html: mailHtml };
}

/** The sign-in mail: a one-time link to the vendor's portal, where the customer sees their licences. */
export function portalLinkMail(f: PortalLinkFacts): RenderedMail {
  const subject = oneLine(`Sign in to your licences from ${f.vendorName}`);
  return assemble(
    subject,
    [`You asked to see your licences from ${f.vendorName}.`],
    html`<p>You asked to see your licences from ${f.vendorName}.</p>`,
    'Sign in',
    f,
  );
}

/** The seat rescue mail: an app asked because every seat is taken; the link opens on that licence's machines. */
export function seatRescueMail(f: SeatRescueFacts): RenderedMail {
  const subject = oneLine(`Free a seat for ${f.productName}`);
  return assemble(
    subject,
    [
      `An app asked to be activated with your licence for ${f.productName} from ${f.vendorName}, but every seat is taken.`,
      `Licence key: ${f.licenseKey}`,
      '',
      'Free a machine you no longer use, and the app can then be activated.',
    ],
    html`<p>An app asked to be activated with your licence for <strong>${f.productName}</strong> from ${f.vendorName}, but every seat is taken.</p>
<p>Licence key: <code>${f.licenseKey}</code></p>
<p>Free a machine you no longer use, and the app can then be activated.</p>`,
    'See your machines',
    f,
  );
}
