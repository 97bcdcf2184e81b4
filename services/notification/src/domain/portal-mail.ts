// The customer portal's mails: the sign-in link a customer asked for, and the seat
// rescue an app asked for when every seat of a licence was taken. Pure: unit tested
// (services/notification/test/unit/notification-portal.test.ts). Every vendor string is HTML-escaped in
// the HTML part; subjects carry no line break.
import { escapeHtml, type RenderedMail } from './purchase-mail';

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
  htmlIntro: string[],
  action: string,
  f: PortalLinkFacts,
): RenderedMail {
  const e = escapeHtml;
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
  const html = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><title>',
    e(subject),
    '</title></head><body style="font-family:sans-serif;line-height:1.5">',
    ...htmlIntro,
    `<p><a href="${e(f.linkUrl)}">${e(action)}</a></p>`,
    `<p>${e(VALIDITY)}</p>`,
    ...(f.supportEmail
      ? [`<p>Questions? Write to <a href="mailto:${e(f.supportEmail)}">${e(f.supportEmail)}</a>.</p>`]
      : []),
    `<p>— ${e(f.vendorName)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

/** The sign-in mail: a one-time link to the vendor's portal, where the customer sees their licences. */
export function portalLinkMail(f: PortalLinkFacts): RenderedMail {
  const subject = oneLine(`Sign in to your licences from ${f.vendorName}`);
  return assemble(
    subject,
    [`You asked to see your licences from ${f.vendorName}.`],
    [`<p>You asked to see your licences from ${escapeHtml(f.vendorName)}.</p>`],
    'Sign in',
    f,
  );
}

/** The seat rescue mail: an app asked because every seat is taken; the link opens on that licence's machines. */
export function seatRescueMail(f: SeatRescueFacts): RenderedMail {
  const subject = oneLine(`Free a seat for ${f.productName}`);
  const e = escapeHtml;
  return assemble(
    subject,
    [
      `An app asked to be activated with your licence for ${f.productName} from ${f.vendorName}, but every seat is taken.`,
      `Licence key: ${f.licenseKey}`,
      '',
      'Free a machine you no longer use, and the app can then be activated.',
    ],
    [
      `<p>An app asked to be activated with your licence for <strong>${e(f.productName)}</strong> from ${e(f.vendorName)}, but every seat is taken.</p>`,
      `<p>Licence key: <code>${e(f.licenseKey)}</code></p>`,
      '<p>Free a machine you no longer use, and the app can then be activated.</p>',
    ],
    'See your machines',
    f,
  );
}
