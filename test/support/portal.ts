import type { ReceivedMail, SmtpInbox } from './smtp-inbox';
import { eventually } from './eventually';
import { WebClient } from './web-client';

// The customer portal from a test's side: the link a portal mail carries, and signing in with it.

export const MAIL_WAIT = { timeoutMs: 20_000, intervalMs: 50 };

/** The text part of a mail. */
export const textOf = (m: ReceivedMail): string =>
  m.parts.find((p) => p.contentType === 'text/plain' && !p.filename)?.body ?? m.raw;

/** The portal link of a mail (the purchase mail's portal, or a sign-in or seat rescue link), as a path. */
export function portalLinkIn(m: ReceivedMail): { path: string; token: string } {
  const match = /https?:\/\/[^/\s]+(\/portal\/acct_[0-9A-Z]{26}\/link\?token=([A-Za-z0-9_%-]+))/.exec(textOf(m));
  if (!match) throw new Error(`no portal link in the mail: ${textOf(m).slice(0, 400)}`);
  return { path: match[1], token: decodeURIComponent(match[2]) };
}

/** The `n`th mail to `address` (1-based), waiting for it. */
export const nthMailTo = (inbox: SmtpInbox, address: string, n = 1): Promise<ReceivedMail> =>
  eventually(() => {
    const got = inbox.to(address);
    expect(got.length).toBeGreaterThanOrEqual(n);
    return got[n - 1];
  }, MAIL_WAIT);

/** Asks for a sign-in link on the e-mail form: the answer (always the same page). */
export async function askForLink(web: WebClient, accountId: string, email: string) {
  const form = await web.get(`/portal/${accountId}`);
  return web.post(`/portal/${accountId}/sign-in`, { _csrf: WebClient.csrf(form.html), email });
}

/** Opens a link's page and presses "Sign in": the answer (303 to the portal, or the 400 page). */
export async function redeem(web: WebClient, link: { path: string; token: string }) {
  const page = await web.get(link.path);
  const accountPath = link.path.replace(/\/link\?.*$/, '');
  return web.post(`${accountPath}/link`, { _csrf: WebClient.csrf(page.html), token: link.token });
}

/** Signs in by e-mail: asks, waits for the `n`th mail to the address, redeems its link. */
export async function signInToPortal(web: WebClient, inbox: SmtpInbox, accountId: string, email: string) {
  const before = inbox.to(email).length;
  await askForLink(web, accountId, email);
  const mail = await nthMailTo(inbox, email, before + 1);
  return redeem(web, portalLinkIn(mail));
}
