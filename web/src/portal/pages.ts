import { csrfField, errorBox, h, htmlDocument, notice } from '../kit/html';
import { portalPath, type PortalSession, type Vendor } from './session';

// The portal's frame and its signed-out pages (sign-in.ts serves them). Every vendor string goes
// through h(). The answer to the e-mail form is one fixed page: it names neither the address nor
// whether it holds licences.

/** The assets every account's portal shares (one copy cached by the browser). */
export const PORTAL_ASSETS = '/portal/assets';

/**
 * A portal page: a skip link, the vendor's name as the banner, the signed-in customer's e-mail and
 * sign-out, <main>, a live region for what the script announces, and a footer naming the vendor.
 * `vendor` is absent on the 404 of an unknown account.
 */
export function portalLayout(title: string, body: string, vendor?: Vendor, s?: PortalSession): string {
  const base = vendor ? portalPath(vendor.id) : '';
  const signedIn =
    vendor && s
      ? `<nav aria-label="Portal"><a href="${h(base)}">Your licences</a></nav>
<form method="post" action="${h(base)}/sign-out" class="signout">${csrfField(s.csrfToken)}<span>${h(s.email)}</span> <button type="submit">Sign out</button></form>`
      : '';
  const brand = vendor
    ? `<a class="brand" href="${h(base)}">${h(vendor.name)}</a>`
    : '<span class="brand">Customer portal</span>';
  return htmlDocument({
    title,
    site: vendor ? `${vendor.name} customer portal` : 'Customer portal',
    assets: PORTAL_ASSETS,
    header: `<a class="skip" href="#main">Skip to content</a>${brand}${signedIn}`,
    body: `${body}
<p id="live" class="sr-only" aria-live="polite"></p>`,
    footer: `${vendor ? `Licences sold by ${h(vendor.name)}. ` : ''}You sign in with a one-time link sent by e-mail; there is no password.`,
  });
}

/** A page with one message (404, 403, 503, …) and a way back. */
export function portalMessagePage(title: string, message: string, vendor?: Vendor, s?: PortalSession): string {
  const back = vendor ? `<p><a href="${h(portalPath(vendor.id))}">Back to the portal</a></p>` : '';
  return portalLayout(title, `<div class="card narrow"><p role="alert">${h(message)}</p>${back}</div>`, vendor, s);
}

/** The e-mail form (shared by the sign-in page and the page of a link that cannot be used). */
function emailForm(vendor: Vendor, csrf: string, button = 'E-mail me a sign-in link'): string {
  return `<form method="post" action="${h(portalPath(vendor.id))}/sign-in" class="card narrow">
  ${csrfField(csrf)}
  <label for="email">Your e-mail address <small>(the one you bought with)</small></label>
  <input id="email" name="email" type="email" autocomplete="email" inputmode="email" required maxlength="254">
  <button type="submit">${h(button)}</button>
</form>`;
}

export function signInPage(vendor: Vendor, csrf: string, error?: string): string {
  return portalLayout(
    'Your licences',
    `${errorBox(error)}
<p>See your ${h(vendor.name)} licence keys, download licence files and free machines you no longer use. Enter the e-mail address you bought with: we send a sign-in link to it.</p>
${emailForm(vendor, csrf)}`,
    vendor,
  );
}

/** The one answer to the e-mail form, the same for every address (it does not even repeat it). */
export function linkSentPage(vendor: Vendor): string {
  return portalLayout(
    'Check your inbox',
    `<div class="card narrow">
  ${notice(`If this address has licences with ${vendor.name}, a sign-in link is on its way; it works once within an hour.`)}
  <p>Nothing after a few minutes? Look in your spam folder, or check that you used the address you bought with.</p>
  <p><a href="${h(portalPath(vendor.id))}">Use another address</a></p>
</div>`,
    vendor,
  );
}

/** The e-mailed link opens this page; signing in is its button (a POST), so a mail scanner that follows links uses nothing up. */
export function linkConfirmPage(vendor: Vendor, csrf: string, token: string): string {
  return portalLayout(
    'Sign in',
    `<form method="post" action="${h(portalPath(vendor.id))}/link" class="card narrow">
  ${csrfField(csrf)}
  <input type="hidden" name="token" value="${h(token)}">
  <p>Sign in to see your ${h(vendor.name)} licences. The link works once.</p>
  <button type="submit">Sign in</button>
</form>`,
    vendor,
  );
}

export function linkProblemPage(vendor: Vendor, csrf: string): string {
  return portalLayout(
    'This link cannot be used',
    `${errorBox('This sign-in link is used, expired or wrong. Links work once, within an hour. Ask for a new one below.')}
${emailForm(vendor, csrf, 'E-mail me a new link')}`,
    vendor,
  );
}
