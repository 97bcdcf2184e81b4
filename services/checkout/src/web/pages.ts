import { formatPrice } from '../domain/payments';
import type { SessionDoc } from '../store/models';

// The hosted checkout page: server-rendered, one stylesheet, one tiny script.
const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const h = (v: unknown) => String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]);

function layout(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(title)}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/checkout/assets/checkout.css"><script src="/checkout/assets/checkout.js" defer></script>${head}</head>
<body><main class="card">${body}</main></body></html>`;
}

export function payPage(s: SessionDoc, csrf: string, testMode: boolean, error?: string): string {
  return layout(
    `Pay for ${s.product_name}`,
    `${testMode ? '<p class="test" role="note"><strong>Test mode</strong>: nothing is charged. Use card 4242 4242 4242 4242.</p>' : ''}
<h1>${h(s.product_name)}</h1>
<p class="price" data-testid="price">${h(formatPrice(s.amount, s.currency))}${h(perPeriod(s))}</p>
${s.recurring?.trial_days ? `<p data-testid="trial">${h(s.recurring.trial_days)} days free, then billed ${h(perPeriod(s).slice(3))}; cancel any time.</p>` : ''}
${error ? `<p class="error" role="alert">${h(error)}</p>` : ''}
<form method="post" action="/checkout/${h(s._id)}/pay">
  <input type="hidden" name="_csrf" value="${h(csrf)}">
  <label for="email">E-mail for your licence</label>
  <input id="email" name="email" type="email" required maxlength="254" autocomplete="email" value="${h(s.customer_email)}">
  <label for="card">Card number</label>
  <input id="card" name="card" inputmode="numeric" autocomplete="cc-number" required maxlength="23" placeholder="4242 4242 4242 4242">
  <button type="submit">Pay ${h(formatPrice(s.amount, s.currency))}</button>
</form>
${
  s.cancel_url
    ? `<form method="post" action="/checkout/${h(s._id)}/cancel" class="cancel">
  <input type="hidden" name="_csrf" value="${h(csrf)}">
  <button type="submit" class="link">Cancel and go back</button>
</form>`
    : ''
}`,
  );
}

/** " / month", " / 3 months", " / year" for a recurring price; "" for a one-time one. */
export function perPeriod(s: Pick<SessionDoc, 'recurring'>): string {
  const r = s.recurring;
  if (!r) return '';
  return r.interval_count === 1 ? ` / ${r.interval}` : ` / ${r.interval_count} ${r.interval}s`;
}

/** The test-mode billing portal: the customer gives a new card (a past-due or unpaid subscription is charged at once). */
export function billingPage(
  s: { product_name: string; status: string; amount: number; currency: string; period: string },
  action: string,
  notice?: { ok: boolean; message: string },
): string {
  return layout(
    'Update your payment method',
    `<p class="test" role="note"><strong>Test mode</strong>: nothing is charged. Use card 4242 4242 4242 4242 (or 4000 0000 0000 0341, which pays only a charge made now: later charges fail).</p>
<h1>${h(s.product_name)}</h1>
<p class="price">${h(formatPrice(s.amount, s.currency))}${h(s.period)}</p>
<p>Subscription status: <strong data-testid="subscription-status">${h(s.status.replace('_', ' '))}</strong></p>
${notice ? `<p class="${notice.ok ? 'test' : 'error'}" role="${notice.ok ? 'status' : 'alert'}">${h(notice.message)}</p>` : ''}
<form method="post" action="${h(action)}">
  <label for="card">New card number</label>
  <input id="card" name="card" inputmode="numeric" autocomplete="cc-number" required maxlength="23" placeholder="4242 4242 4242 4242">
  <button type="submit">${s.status === 'past_due' || s.status === 'unpaid' ? 'Update card and pay now' : 'Update card'}</button>
</form>`,
  );
}

export function successUrl(s: SessionDoc): string {
  return `${s.success_url}${s.success_url.includes('?') ? '&' : '?'}session_id=${encodeURIComponent(s._id)}`;
}

export function paidPage(s: SessionDoc, licenseKey: string): string {
  const next = successUrl(s);
  return layout(
    'Payment received',
    `<h1>Thank you!</h1>
<p>Your licence key for ${h(s.product_name)}:</p>
<p class="copy-row"><code id="license-key" data-testid="license-key">${h(licenseKey)}</code> <button type="button" data-copy="license-key">Copy</button></p>
<p>You will be taken back in a few seconds. <a href="${h(next)}">Continue now</a></p>`,
    `<meta http-equiv="refresh" content="8;url=${h(next)}">`,
  );
}

/**
 * Where a cancelled checkout goes back to: a link (and a refresh) on our page, like the paid page's
 * link to success_url, and only for the browser this session's page was shown to (cancelPage is
 * reached through the page's form token): a bare link to /checkout/{id}/cancel redirects nowhere.
 */
export function cancelPage(s: SessionDoc): string {
  return layout(
    'Checkout cancelled',
    `<h1>Checkout cancelled</h1>
<p>Nothing was charged. <a href="${h(s.cancel_url)}">Go back</a></p>`,
    `<meta http-equiv="refresh" content="2;url=${h(s.cancel_url)}">`,
  );
}

export const messagePage = (title: string, message: string) =>
  layout(title, `<h1>${h(title)}</h1><p>${h(message)}</p>`);

export const CSS = `
body { margin:0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background:#f6f7f9; color:#1c2430; }
.card { max-width:28rem; margin:2rem auto; background:#fff; border:1px solid #dde1e7; border-radius:.6rem; padding:1.5rem; }
h1 { font-size:1.4rem; margin:.25rem 0; } .price { font-size:1.8rem; font-weight:700; margin:.25rem 0 1rem; }
form { display:flex; flex-direction:column; gap:.5rem; } label { font-weight:600; font-size:.9rem; }
input { font:inherit; padding:.6rem; border:1px solid #cfd5dd; border-radius:.35rem; }
button { font:inherit; padding:.65rem 1rem; border:0; border-radius:.35rem; background:#2457d6; color:#fff; cursor:pointer; margin-top:.5rem; }
button.link { background:none; color:#2457d6; padding:0; text-decoration:underline; } form.cancel { margin-top:1rem; }
:focus-visible { outline:3px solid #f5b700; outline-offset:2px; }
.test { background:#fff4d6; border:1px solid #f5b700; padding:.5rem .75rem; border-radius:.35rem; font-size:.9rem; }
.error { color:#b42318; background:#fdecea; padding:.6rem .8rem; border-radius:.35rem; }
code { font-family: ui-monospace, Menlo, monospace; word-break:break-all; } .copy-row { display:flex; gap:.75rem; align-items:center; flex-wrap:wrap; }
@media (max-width: 30rem) { .card { margin:0; border-radius:0; border:0; } }
`;

export const JS = `
document.addEventListener('click', function (e) {
  var b = e.target.closest('[data-copy]');
  if (!b) return;
  navigator.clipboard.writeText(document.getElementById(b.getAttribute('data-copy')).textContent).then(function () { b.textContent = 'Copied'; }, function () { b.textContent = 'Select and copy'; });
});
`;
