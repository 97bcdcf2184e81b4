import type { Request, Response } from 'express';
import type { CheckoutPageSession } from '@licensing/proto';
import type { Clients } from '../backends/clients';
import { readCookie, tokensMatch } from '../kit/cookies';
import { field } from '../kit/form';
import { sendPage } from '../kit/template';
import { billingPage, cancelPage, messagePage, paidPage, payPage } from './pages';

// One handler per route of the hosted checkout page (routes.ts lists them). The checkout service
// holds the rules (CheckoutPageService): it issues and checks the form tokens and the receipts and
// keeps only their digests; this side renders, and keeps the secrets in the browser's cookies.

export const CSRF_COOKIE = 'lk_checkout_csrf';
export const RECEIPT_COOKIE = 'lk_checkout_receipt';

export interface CheckoutPageContext {
  pages: Clients['checkoutPages'];
  /** Secure cookies (everywhere but development and test). */
  secureCookies: boolean;
}

export type CheckoutHandler = (ctx: CheckoutPageContext, req: Request, res: Response) => Promise<void>;

/** A cookie's value; a malformed one is no token (the form is refused with the 403 page, never a 500). */
function cookieOf(req: Request, name: string): string {
  try {
    return readCookie(req, name) ?? '';
  } catch {
    return '';
  }
}

/** Scoped to the session's own pages, for the browser's session only, never sent cross-site. */
function setCookie(ctx: CheckoutPageContext, res: Response, name: string, id: string, value: string): void {
  const secure = ctx.secureCookies ? '; Secure' : '';
  res.append('Set-Cookie', `${name}=${value}; Path=/checkout/${id}; HttpOnly; SameSite=Strict${secure}`);
}

const idOf = (req: Request) => String(req.params.id);

/** The form's token, if the cookie and the field agree (constant time); the service checks it is its own. */
function formToken(req: Request): string | undefined {
  const token = cookieOf(req, CSRF_COOKIE);
  return tokensMatch(token, (req.body as Record<string, unknown> | undefined)?._csrf) ? token : undefined;
}

const NOT_FOUND = messagePage('Checkout not found', 'This checkout link is not valid. Ask the seller for a new one.');
const EXPIRED = messagePage(
  'This checkout has expired',
  'Nothing was charged. Ask the seller for a new checkout link.',
);
const ALREADY_PAID = messagePage(
  'Already paid',
  'This checkout is complete. The licence key was shown to the buyer after payment, and the seller has it too.',
);
const FORM_EXPIRED = messagePage('This form has expired', 'Reload the checkout page and try again.');
const CANCELLED = messagePage('Checkout cancelled', 'Nothing was charged. You can close this page.');
const UNAVAILABLE = messagePage(
  'Checkout unavailable',
  'This checkout cannot be paid at the moment. Nothing was charged. Ask the seller for a new checkout link.',
);
const LINK_GONE = messagePage('Link not valid', 'This link has expired or is not valid. Ask the seller for a new one.');

/** The page of a session that cannot be paid (not found, expired, paid), or false for an open one. */
function refusal(res: Response, state: string): boolean {
  if (state === 'not_found') sendPage(res, NOT_FOUND, 404);
  else if (state === 'expired') sendPage(res, EXPIRED, 410);
  else if (state === 'complete' || state === 'already_paid') sendPage(res, ALREADY_PAID, 409);
  else return false;
  return true;
}

/** GET /checkout/:id: the pay page; the paid page for the browser that paid; Stripe's page for a Stripe session. */
export const showCheckout: CheckoutHandler = async (ctx, req, res) => {
  const receipt = cookieOf(req, RECEIPT_COOKIE);
  const p = await ctx.pages.getPage({ session_id: idOf(req), receipt, issue_form_token: true });
  const s = p.session as CheckoutPageSession;
  if (p.state === 'paid_here') return sendPage(res, paidPage(s, p.license_key));
  if (refusal(res, p.state)) return;
  if (s.provider === 'stripe') return void res.redirect(303, s.provider_url);
  if (!s.takes_cards || !p.form_token) return sendPage(res, UNAVAILABLE, 503);
  setCookie(ctx, res, CSRF_COOKIE, s.id, p.form_token);
  sendPage(res, payPage(s, p.form_token));
};

/** POST /checkout/:id/pay: the test card; paid, the browser gets its receipt and sees its key. */
export const pay: CheckoutHandler = async (ctx, req, res) => {
  const id = idOf(req);
  const token = formToken(req);
  if (!token) return sendPage(res, FORM_EXPIRED, 403);
  const receipt = cookieOf(req, RECEIPT_COOKIE);
  const email = field(req, 'email', 1000);
  const card = field(req, 'card', 30);
  const out = await ctx.pages.pay({ session_id: id, form_token: token, receipt, email, card });
  switch (out.outcome) {
    case 'paid':
      setCookie(ctx, res, RECEIPT_COOKIE, id, out.receipt);
      return void res.redirect(303, `/checkout/${id}`);
    case 'not_payable_here':
      return void res.redirect(303, `/checkout/${id}`);
    case 'form_expired':
      return sendPage(res, FORM_EXPIRED, 403);
    case 'lapsed':
      return sendPage(res, messagePage('This checkout has expired', 'Nothing was charged.'), 410);
    case 'invalid_email':
    case 'declined': {
      const s = out.session as CheckoutPageSession;
      setCookie(ctx, res, CSRF_COOKIE, id, out.form_token);
      return sendPage(res, payPage(s, out.form_token, out.message), out.outcome === 'declined' ? 402 : 400);
    }
    default:
      if (!refusal(res, out.outcome)) throw new Error(`unexpected pay outcome ${out.outcome}`);
  }
};

/** GET /checkout/:id/cancel: a plain page; going back to cancel_url takes the page's form (POST). */
export const showCancel: CheckoutHandler = async (ctx, req, res) => {
  const p = await ctx.pages.getPage({ session_id: idOf(req), receipt: '', issue_form_token: false });
  if (refusal(res, p.state)) return;
  sendPage(res, CANCELLED);
};

/** POST /checkout/:id/cancel: the page's form; the way back to cancel_url. */
export const cancel: CheckoutHandler = async (ctx, req, res) => {
  const token = formToken(req);
  if (!token) return sendPage(res, FORM_EXPIRED, 403);
  const out = await ctx.pages.cancel({ session_id: idOf(req), form_token: token });
  if (out.outcome === 'form_expired') return sendPage(res, FORM_EXPIRED, 403);
  if (refusal(res, out.outcome)) return;
  sendPage(res, out.cancel_url ? cancelPage(out.cancel_url) : CANCELLED);
};

const billingAction = (req: Request) => `/checkout/${idOf(req)}/billing/${String(req.params.token)}`;

/** GET /checkout/:id/billing/:token: the test-mode billing portal (the link's token is the capability). */
export const showBilling: CheckoutHandler = async (ctx, req, res) => {
  const b = await ctx.pages.getBilling({ session_id: idOf(req), token: String(req.params.token) });
  if (!b.found) return sendPage(res, LINK_GONE, 404);
  sendPage(res, billingPage(b, billingAction(req)));
};

/** POST /checkout/:id/billing/:token: a new card (an owed period is charged at once). */
export const updateBilling: CheckoutHandler = async (ctx, req, res) => {
  const card = field(req, 'card', 30);
  const b = await ctx.pages.updateBillingCard({ session_id: idOf(req), token: String(req.params.token), card });
  if (!b.found) return sendPage(res, LINK_GONE, 404);
  const ok = b.outcome === 'updated';
  const status = ok ? 200 : b.outcome === 'canceled' ? 409 : 402;
  sendPage(res, billingPage(b, billingAction(req), { ok, message: b.message }), status);
};
