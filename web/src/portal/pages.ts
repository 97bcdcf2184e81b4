import { csrfField, errorBox, htmlDocument, notice } from '../kit/html';
import { portalPath, type PortalSession, type Vendor } from './session';
import { html, nothing, type Html } from '../kit/template';

// The portal's frame and its signed-out pages (sign-in.ts serves them). Written with html`…`
// (kit/template.ts): every vendor string is escaped. The answer to the e-mail form is one fixed page: it names neither the address nor
// whether it holds licences.

/** The assets every account's portal shares (one copy cached by the browser). */
export const PORTAL_ASSETS = '/portal/assets';

/**
 * A portal page: a skip link, the vendor's name as the banner, the signed-in customer's e-mail and
 * sign-out, <main>, a live region for what the script announces, and a footer naming the vendor.
 * `vendor` is absent on the 404 of an unknown account.
 */
export function portalLayout(title: string, body: Html, vendor?: Vendor, s?: PortalSession): Html {
  const base = vendor ? portalPath(vendor.id) : '';
  const signedIn =
    vendor && s
      ? html`<nav aria-label="Portal"><a href="${base}">Your licences</a></nav>
<form method="post" action="${base}/sign-out" class="signout">${csrfField(s.csrfToken)}<span>${s.email}</span> <button type="submit">Sign out</button></form>`
      : '';
  const brand = vendor
    ? html`<a class="brand" href="${base}">${vendor.name}</a>`
    : html`<span class="brand">Customer portal</span>`;
  return htmlDocument({
    title,
    site: vendor ? `${vendor.name} customer portal` : 'Customer portal',
    assets: PORTAL_ASSETS,
    header: html`<a class="skip" href="#main">Skip to content</a>${brand}${signedIn}`,
    body: html`${body}
<p id="live" class="sr-only" aria-live="polite"></p>`,
    footer: html`${vendor ? html`Licences sold by ${vendor.name}. ` : nothing}You sign in with a one-time link sent by e-mail; there is no password.`,
  });
}

/** A page with one message (404, 403, 503, …) and a way back. */
export function portalMessagePage(title: string, message: string, vendor?: Vendor, s?: PortalSession): Html {
  const back = vendor ? html`<p><a href="${portalPath(vendor.id)}">Back to the portal</a></p>` : '';
  return portalLayout(title, html`<div class="card narrow"><p role="alert">${message}</p>${back}</div>`, vendor, s);
}

/** The e-mail form (shared by the sign-in page and the page of a link that cannot be used). */
function emailForm(vendor: Vendor, csrf: string, button = 'E-mail me a sign-in link'): Html {
  return html`<form method="post" action="${portalPath(vendor.id)}/sign-in" class="card narrow">
  ${csrfField(csrf)}
  <label for="email">Your e-mail address <small>(the one you bought with)</small></label>
  <input id="email" name="email" type="email" autocomplete="email" inputmode="email" required maxlength="254">
  <button type="submit">${button}</button>
</form>`;
}

export function signInPage(vendor: Vendor, csrf: string, error?: string): Html {
  return portalLayout(
    'Your licences',
    html`${errorBox(error)}
<p>See your ${vendor.name} licence keys, download licence files and free machines you no longer use. Enter the e-mail address you bought with: we send a sign-in link to it.</p>
${emailForm(vendor, csrf)}`,
    vendor,
  );
}

/** The one answer to the e-mail form, the same for every address (it does not even repeat it). */
export function linkSentPage(vendor: Vendor): Html {
  return portalLayout(
    'Check your inbox',
    html`<div class="card narrow">
  ${notice(`If this address has licences with ${vendor.name}, a sign-in link is on its way; it works once within an hour.`)}
  <p>Nothing after a few minutes? Look in your spam folder, or check that you used the address you bought with.</p>
  <p><a href="${portalPath(vendor.id)}">Use another address</a></p>
</div>`,
    vendor,
  );
}

/** The e-mailed link opens this page; signing in is its button (a POST), so a mail scanner that follows links uses nothing up. */
export function linkConfirmPage(vendor: Vendor, csrf: string, token: string): Html {
  return portalLayout(
    'Sign in',
    html`<form method="post" action="${portalPath(vendor.id)}/link" class="card narrow">
  ${csrfField(csrf)}
  <input type="hidden" name="token" value="${token}">
  <p>Sign in to see your ${vendor.name} licences. The link works once.</p>
  <button type="submit">Sign in</button>
</form>`,
    vendor,
  );
}

export function linkProblemPage(vendor: Vendor, csrf: string): Html {
  return portalLayout(
    'This link cannot be used',
    html`${errorBox('This sign-in link is used, expired or wrong. Links work once, within an hour. Ask for a new one below.')}
${emailForm(vendor, csrf, 'E-mail me a new link')}`,
    vendor,
  );
}
