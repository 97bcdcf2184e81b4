import type { CheckoutBilling, CheckoutPageSession } from '@licensing/proto';
import { html, nothing, type Html } from '../kit/template';

// The hosted checkout page's templates: server-rendered, one stylesheet, one tiny script. Every value
// is escaped by html`…`; nothing here is put on a page unescaped.

/** An amount in minor units as the buyer reads it ("€19.00", "¥500"). */
export function formatPrice(amount: number, currency: string): string {
  const format = new Intl.NumberFormat('en', { style: 'currency', currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amount / 10 ** digits);
}

/** " / month", " / 3 months", " / year" for a recurring price; "" for a one-time one. */
export function perPeriod(p: { interval: string; interval_count: number }): string {
  if (!p.interval) return '';
  return p.interval_count === 1 ? ` / ${p.interval}` : ` / ${p.interval_count} ${p.interval}s`;
}

function layout(title: string, body: Html, head: Html = nothing): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/checkout/assets/checkout.css"><script src="/checkout/assets/checkout.js" defer></script>${head}</head>
<body><main class="card">${body}</main></body></html>`;
}

const TEST_NOTE = html`<p class="test" role="note"><strong>Test mode</strong>: nothing is charged. Use card 4242 4242 4242 4242.</p>`;

export function payPage(s: CheckoutPageSession, csrf: string, error?: string): Html {
  const price = formatPrice(s.amount, s.currency);
  const period = perPeriod(s);
  const trial =
    s.trial_days > 0 &&
    html`<p data-testid="trial">${s.trial_days} days free, then billed ${period.slice(3)}; cancel any time.</p>`;
  const cancel =
    s.cancel_url &&
    html`<form method="post" action="/checkout/${s.id}/cancel" class="cancel">
  <input type="hidden" name="_csrf" value="${csrf}">
  <button type="submit" class="link">Cancel and go back</button>
</form>`;
  return layout(
    `Pay for ${s.product_name}`,
    html`${TEST_NOTE}
<h1>${s.product_name}</h1>
<p class="price" data-testid="price">${price}${period}</p>
${trial || nothing}
${error ? html`<p class="error" role="alert">${error}</p>` : nothing}
<form method="post" action="/checkout/${s.id}/pay">
  <input type="hidden" name="_csrf" value="${csrf}">
  <label for="email">E-mail for your licence</label>
  <input id="email" name="email" type="email" required maxlength="254" autocomplete="email" value="${s.customer_email}">
  <label for="card">Card number</label>
  <input id="card" name="card" inputmode="numeric" autocomplete="cc-number" required maxlength="23" placeholder="4242 4242 4242 4242">
  <button type="submit">Pay ${price}</button>
</form>
${cancel || nothing}`,
  );
}

/** The test-mode billing portal: the customer gives a new card (a past-due or unpaid subscription is charged at once). */
export function billingPage(b: CheckoutBilling, action: string, notice?: { ok: boolean; message: string }): Html {
  const owing = b.status === 'past_due' || b.status === 'unpaid';
  return layout(
    'Update your payment method',
    html`<p class="test" role="note"><strong>Test mode</strong>: nothing is charged. Use card 4242 4242 4242 4242 (or 4000 0000 0000 0341, which pays only a charge made now: later charges fail).</p>
<h1>${b.product_name}</h1>
<p class="price">${formatPrice(b.amount, b.currency)}${perPeriod(b)}</p>
<p>Subscription status: <strong data-testid="subscription-status">${b.status.replace('_', ' ')}</strong></p>
${notice ? html`<p class="${notice.ok ? 'test' : 'error'}" role="${notice.ok ? 'status' : 'alert'}">${notice.message}</p>` : nothing}
<form method="post" action="${action}">
  <label for="card">New card number</label>
  <input id="card" name="card" inputmode="numeric" autocomplete="cc-number" required maxlength="23" placeholder="4242 4242 4242 4242">
  <button type="submit">${owing ? 'Update card and pay now' : 'Update card'}</button>
</form>`,
  );
}

export function paidPage(s: CheckoutPageSession, licenseKey: string): Html {
  const next = s.return_url;
  return layout(
    'Payment received',
    html`<h1>Thank you!</h1>
<p>Your licence key for ${s.product_name}:</p>
<p class="copy-row"><code id="license-key" data-testid="license-key">${licenseKey}</code> <button type="button" data-copy="license-key">Copy</button></p>
<p>You will be taken back in a few seconds. <a href="${next}">Continue now</a></p>`,
    html`<meta http-equiv="refresh" content="8;url=${next}">`,
  );
}

/**
 * Where a cancelled checkout goes back to: a link (and a refresh) on our page, like the paid page's
 * link to success_url, and only for the browser this session's page was shown to (it is reached
 * through the page's form token): a bare link to /checkout/{id}/cancel redirects nowhere.
 */
export function cancelPage(cancelUrl: string): Html {
  return layout(
    'Checkout cancelled',
    html`<h1>Checkout cancelled</h1>
<p>Nothing was charged. <a href="${cancelUrl}">Go back</a></p>`,
    html`<meta http-equiv="refresh" content="2;url=${cancelUrl}">`,
  );
}

export const messagePage = (title: string, message: string): Html =>
  layout(title, html`<h1>${title}</h1><p>${message}</p>`);
