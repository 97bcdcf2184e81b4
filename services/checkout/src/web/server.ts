import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  AppError,
  checkEmail,
  formTextProblem,
  isId,
  isStoreUnavailable,
  saneRequestId,
  textProblem,
  withRequestId,
  type Clock,
  type Logger,
} from '@licensing/runtime';
import type { PaymentProvider } from '../domain/payments';
import { effectiveStatus } from '../domain/session';
import type { Completion } from '../use-cases/completion';
import type { StripeWebhook } from '../use-cases/stripe-webhook';
import { NOT_CONFIGURED_MESSAGE } from '../domain/modes';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore } from '../store/queries';
import { CSS, JS, billingPage, cancelPage, messagePage, paidPage, payPage } from './pages';
import { testCardOf } from '../domain/subscription';
import { portalSubscription, updateCard, type SubscriptionDeps } from '../use-cases/subscriptions';

const CSRF_COOKIE = 'lk_checkout_csrf';
const RECEIPT_COOKIE = 'lk_checkout_receipt';
/** Largest Stripe event accepted (the gateway refuses bigger ones before they get here). */
export const WEBHOOK_BODY_LIMIT = 256 * 1024;
/** A form token is good for an hour (and never past its session's expiry). */
const TOKEN_TTL_MS = 3_600_000;
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const digest = (s: string) => createHash('sha256').update(s).digest();
const hex = (s: string) => digest(s).toString('hex');
const same = (a: string | undefined, b: unknown) =>
  !!a && typeof b === 'string' && !!b && timingSafeEqual(digest(a), digest(b));

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join('='));
    } catch {
      return undefined; // malformed: no token, so the form is refused (403 page), never a 500
    }
  }
  return undefined;
}

export interface PageDeps {
  store: CheckoutStore;
  completion: Completion;
  provider: PaymentProvider;
  /** Present when payments go through Stripe: POST /webhooks/stripe. */
  stripeWebhook?: StripeWebhook;
  /** Subscriptions: the test-mode billing portal (/checkout/{session}/billing/{token}). */
  subscriptions?: SubscriptionDeps;
  /** Stripe chosen, its keys not given yet: the Stripe webhook answers 503 saying so. */
  paymentsNotConfigured?: boolean;
  clock: Clock;
  log: Logger;
  secureCookies: boolean;
}

/**
 * The hosted checkout page, public (the gateway exposes it under /checkout
 * with http-proxy-middleware), and the Stripe webhook receiver
 * (/webhooks/stripe, proxied the same way with its body untouched).
 *
 * The licence key is shown only to the browser that paid: paying sets a
 * random secret in an HttpOnly cookie whose digest is stored as a receipt;
 * anyone else who opens the session's URL sees "already paid". Form tokens
 * (CSRF) are issued and checked on the server: a token is good only if this
 * service stored its digest for this session, and it must match the cookie.
 */
export function checkoutPageApp({
  store,
  completion,
  provider,
  stripeWebhook,
  subscriptions,
  paymentsNotConfigured = false,
  clock,
  log,
  secureCookies,
}: PageDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The gateway's request id (set by its proxy): page requests log and publish under it too.
  app.use((req, res, next) => {
    res.locals.requestId = saneRequestId(req.get('x-request-id')) ?? '';
    withRequestId(res.locals.requestId, next);
  });
  app.use((_req, res, next) => {
    res.set({
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
    });
    next();
  });
  app.get(
    '/checkout/assets/checkout.css',
    (_req, res) => void res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(CSS),
  );
  app.get(
    '/checkout/assets/checkout.js',
    (_req, res) => void res.type('application/javascript').set('Cache-Control', 'public, max-age=3600').send(JS),
  );
  // Stripe signs the exact bytes it sent: the body is kept raw, never parsed before the signature is checked.
  app.post('/webhooks/stripe', express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT }), async (req, res) => {
    const problem = (status: number, code: string, detail: string) =>
      void res
        .status(status)
        .type('application/problem+json')
        .send(
          JSON.stringify({
            type: `/docs#error-${code}`,
            title:
              ({ 404: 'Not Found', 409: 'Conflict', 503: 'Service Unavailable' } as Record<number, string>)[status] ??
              'Bad Request',
            status,
            detail,
            code,
            request_id: res.locals.requestId,
          }),
        );
    if (paymentsNotConfigured) return problem(503, 'service_unavailable', NOT_CONFIGURED_MESSAGE);
    if (!stripeWebhook)
      return problem(404, 'not_found', 'payments do not go through Stripe here (PAYMENT_PROVIDER=test)');
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const out = await stripeWebhook.receive(body, req.get('stripe-signature') ?? '', res.locals.requestId);
    if (out.status === 200) return void res.json(out.body);
    problem(out.status, out.error.code, out.error.message);
  });

  app.use(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 }));

  const page = (res: Response, status: number, html: string) => void res.status(status).type('html').send(html);

  // No control characters (the shared rule of @licensing/runtime's text.ts) in a posted field, a query
  // value or the path: a 400 page naming the field, before anything is looked up or stored.
  app.use((req, res, next) => {
    let path: string | undefined;
    try {
      path = decodeURIComponent(req.path);
    } catch {
      path = undefined; // not percent-encoded UTF-8: the router's URIError answers it
    }
    const bad =
      formTextProblem(req.body as Record<string, unknown> | undefined) ??
      formTextProblem(req.query as Record<string, unknown>) ??
      (path === undefined ? undefined : textProblem('path', path));
    if (!bad) return next();
    page(res, 400, messagePage('Bad request', `${bad.message}. Go back, correct it and try again.`));
  });
  const cookieAttrs = (id: string) =>
    `Path=/checkout/${id}; HttpOnly; SameSite=Strict${secureCookies ? '; Secure' : ''}`;

  const issueCsrf = async (res: Response, s: SessionDoc) => {
    const token = randomBytes(32).toString('base64url');
    const until = Math.min(clock.now().getTime() + TOKEN_TTL_MS, s.expires_at.getTime());
    await store.addPageToken(hex(token), s._id, new Date(until));
    res.append('Set-Cookie', `${CSRF_COOKIE}=${token}; ${cookieAttrs(s._id)}`);
    return token;
  };

  /** The form's token: the cookie and the field agree, and this service issued it for this session. */
  const csrfOk = async (req: Request, id: string, field: unknown) => {
    const token = cookie(req, CSRF_COOKIE);
    return same(token, field) && (await store.pageTokenValid(hex(token!), id, clock.now()));
  };

  /** Paying gives this browser a receipt: a random secret in its cookie, only the digest stored. */
  const issueReceipt = async (res: Response, id: string) => {
    const secret = randomBytes(32).toString('base64url');
    await store.addReceipt(hex(secret), id, clock.now());
    res.append('Set-Cookie', `${RECEIPT_COOKIE}=${secret}; ${cookieAttrs(id)}`);
  };

  const paidByThisBrowser = async (req: Request, id: string) => {
    const secret = cookie(req, RECEIPT_COOKIE);
    return !!secret && (await store.hasReceipt(hex(secret), id));
  };

  const takesCards = (s: SessionDoc) => s.provider !== 'stripe' && provider.takesCardsOnPage;
  const alreadyPaid = (res: Response) =>
    page(
      res,
      409,
      messagePage(
        'Already paid',
        'This checkout is complete. The licence key was shown to the buyer after payment, and the seller has it too.',
      ),
    );

  const load = (req: Request) => {
    const id = String(req.params.id);
    return isId('cs', id) ? store.findById(id) : Promise.resolve(null);
  };

  /** The session if it can be paid, or the page that says why not. */
  function payable(res: Response, s: SessionDoc | null): SessionDoc | undefined {
    if (!s)
      return void page(
        res,
        404,
        messagePage('Checkout not found', 'This checkout link is not valid. Ask the seller for a new one.'),
      );
    const status = effectiveStatus(s, clock.now());
    if (status === 'expired')
      return void page(
        res,
        410,
        messagePage('This checkout has expired', 'Nothing was charged. Ask the seller for a new checkout link.'),
      );
    if (status === 'complete') return void alreadyPaid(res);
    return s;
  }

  // The test-mode billing portal: the link's token (only its digest stored, an hour) is the capability.
  const portal = async (req: Request) => {
    const id = String(req.params.id);
    const token = String(req.params.token);
    if (!subscriptions || !isId('cs', id) || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const sub = await portalSubscription(subscriptions, id, token);
    const session = sub ? await store.findById(id) : null;
    return sub && session ? { sub, session, action: `/checkout/${id}/billing/${token}` } : null;
  };
  const portalGone = (res: Response) =>
    page(
      res,
      404,
      messagePage('Link not valid', 'This link has expired or is not valid. Ask the seller for a new one.'),
    );
  const billingView = (p: NonNullable<Awaited<ReturnType<typeof portal>>>) => ({
    product_name: p.session.product_name,
    status: p.sub.status,
    amount: p.sub.amount,
    currency: p.sub.currency,
    period: p.sub.interval_count === 1 ? ` / ${p.sub.interval}` : ` / ${p.sub.interval_count} ${p.sub.interval}s`,
  });
  app.get('/checkout/:id/billing/:token', async (req, res) => {
    const p = await portal(req);
    if (!p) return portalGone(res);
    page(res, 200, billingPage(billingView(p), p.action));
  });
  app.post('/checkout/:id/billing/:token', async (req, res) => {
    const p = await portal(req);
    if (!p) return portalGone(res);
    const form = (req.body ?? {}) as Record<string, unknown>;
    const card = typeof form.card === 'string' ? form.card.slice(0, 30) : '';
    if (p.sub.status === 'canceled')
      return page(
        res,
        409,
        billingPage(billingView(p), p.action, { ok: false, message: 'This subscription is canceled.' }),
      );
    const out = await updateCard(subscriptions!, p.sub, card, res.locals.requestId);
    const view = billingView({ ...p, sub: out.doc });
    page(res, out.ok ? 200 : 402, billingPage(view, p.action, { ok: out.ok, message: out.message }));
  });

  app.get('/checkout/:id', async (req, res) => {
    const current = await load(req);
    // The browser that paid sees its key (the licence is issued now if a crash left it pending).
    if (current?.status === 'complete' && (await paidByThisBrowser(req, current._id)))
      return page(res, 200, paidPage(current, await completion.issue(current, res.locals.requestId)));
    const s = payable(res, current);
    if (!s) return;
    // Stripe sessions are paid on Stripe's page.
    if (s.provider === 'stripe') return void res.redirect(303, s.provider_url);
    if (!takesCards(s))
      return page(
        res,
        503,
        messagePage(
          'Checkout unavailable',
          'This checkout cannot be paid at the moment. Nothing was charged. Ask the seller for a new checkout link.',
        ),
      );
    page(res, 200, payPage(s, await issueCsrf(res, s), true));
  });

  // Going back to cancel_url takes the page's form token, as reaching success_url takes paying: a
  // link to /checkout/{id}/cancel that anyone with an account could make up (any http(s) cancel_url)
  // must not turn our address into a redirect to theirs. Without the token: a plain page.
  app.get('/checkout/:id/cancel', async (req, res) => {
    const s = payable(res, await load(req));
    if (!s) return;
    page(res, 200, messagePage('Checkout cancelled', 'Nothing was charged. You can close this page.'));
  });

  app.post('/checkout/:id/cancel', async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const id = String(req.params.id);
    if (!isId('cs', id) || !(await csrfOk(req, id, form._csrf)))
      return page(res, 403, messagePage('This form has expired', 'Reload the checkout page and try again.'));
    const s = payable(res, await load(req));
    if (!s) return;
    if (!s.cancel_url)
      return page(res, 200, messagePage('Checkout cancelled', 'Nothing was charged. You can close this page.'));
    page(res, 200, cancelPage(s));
  });

  app.post('/checkout/:id/pay', async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const id = String(req.params.id);
    if (!isId('cs', id) || !(await csrfOk(req, id, form._csrf)))
      return page(res, 403, messagePage('This form has expired', 'Reload the checkout page and try again.'));
    const token = hex(cookie(req, CSRF_COOKIE)!);
    // Paid already. A double click on the form that paid (same token) is the same buyer: a receipt
    // for this browser too, and the same licence, never a second one. Anyone else: "already paid".
    const current = await load(req);
    if (current?.status === 'complete') {
      if (current.paid_with !== token && !(await paidByThisBrowser(req, id))) return alreadyPaid(res);
      await issueReceipt(res, id);
      return void res.redirect(303, `/checkout/${id}`);
    }
    const s = payable(res, current);
    if (!s) return;
    if (!takesCards(s)) return void res.redirect(303, `/checkout/${id}`);
    let email: string;
    try {
      email = checkEmail('email', typeof form.email === 'string' ? form.email : '');
    } catch (err) {
      return page(res, 400, payPage(s, await issueCsrf(res, s), true, (err as AppError).message));
    }
    const card = typeof form.card === 'string' ? form.card.slice(0, 30) : '';
    const charge = await provider.charge({
      sessionId: s._id,
      amount: s.amount,
      currency: s.currency,
      customerEmail: email,
      card,
    });
    if (!charge.ok)
      return page(res, 402, payPage({ ...s, customer_email: email }, await issueCsrf(res, s), true, charge.message));
    // A recurring price keeps which test card paid: it is billed again at each period end (test clock).
    const testCard = s.recurring ? (testCardOf(card) ?? undefined) : undefined;
    await completion.markPaid(s, { paymentId: charge.paymentId, email, paidWith: token, testCard }); // false when another tab was first
    const paid = await store.findById(s._id);
    if (paid?.status !== 'complete')
      return page(res, 410, messagePage('This checkout has expired', 'Nothing was charged.'));
    // FerretDB may let two tabs both "win" the write: only the form recorded as the payer gets the key.
    if (paid.paid_with !== token) return alreadyPaid(res);
    await completion.issue(paid, res.locals.requestId);
    await issueReceipt(res, id);
    res.redirect(303, `/checkout/${id}`);
  });

  app.use((_req, res) => page(res, 404, messagePage('Not found', 'There is no such page.')));
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    if (req.path === '/webhooks/stripe') {
      // JSON for Stripe. A body the parser refused (too large, an encoding it cannot undo, a bad
      // charset) is the sender's fault: its 4xx. Anything else (the store down) is 503, and Stripe retries.
      const given = Number((err as { status?: number }).status);
      const status = given >= 400 && given < 500 ? given : 503;
      if (status === 503) log.error({ err }, 'stripe webhook error');
      const [code, title, detail] =
        status === 413
          ? ['payload_too_large', 'Content Too Large', 'the event is too large']
          : status === 415
            ? [
                'unsupported_media_type',
                'Unsupported Media Type',
                'the event body must be JSON without a content encoding',
              ]
            : status === 503
              ? ['service_unavailable', 'Service Unavailable', 'the event could not be handled now; retry later']
              : ['invalid_request', 'Bad Request', 'the event body could not be read'];
      return void res
        .status(status)
        .type('application/problem+json')
        .send(
          JSON.stringify({
            type: `/docs#error-${code}`,
            title,
            status,
            detail,
            code,
            request_id: res.locals.requestId,
          }),
        );
    }
    // A path the router cannot decode (URIError, status 400) names no session.
    if (err instanceof URIError)
      return page(
        res,
        404,
        messagePage('Checkout not found', 'This checkout link is not valid. Ask the seller for a new one.'),
      );
    const away = (err instanceof AppError && err.code === 'service_unavailable') || isStoreUnavailable(err);
    if (away) {
      log.warn({ err }, 'checkout page: a backing service or the store is unavailable');
      res.setHeader('Retry-After', '5');
    } else log.error({ err }, 'checkout page error');
    page(
      res,
      away ? 503 : 500,
      messagePage('Something went wrong', 'Nothing more was charged. Please reload the page in a moment.'),
    );
  });
  return app;
}

export async function listen(app: express.Express, host: string, port: number): Promise<Server> {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
