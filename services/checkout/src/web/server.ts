import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, checkEmail, isId, saneRequestId, withRequestId, type Clock, type Logger } from '@licensing/runtime';
import type { PaymentProvider } from '../domain/payments';
import { effectiveStatus } from '../domain/session';
import type { Completion } from '../handlers/completion';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore } from '../store/queries';
import { CSS, JS, messagePage, paidPage, payPage } from './pages';

const CSRF_COOKIE = 'lk_checkout_csrf';
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const digest = (s: string) => createHash('sha256').update(s).digest();
const same = (a: string | undefined, b: unknown) => !!a && typeof b === 'string' && !!b && timingSafeEqual(digest(a), digest(b));

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

export interface PageDeps {
  store: CheckoutStore;
  completion: Completion;
  provider: PaymentProvider;
  clock: Clock;
  log: Logger;
  secureCookies: boolean;
}

/**
 * The hosted checkout page, public: the unguessable session id in the URL is
 * the capability. The gateway exposes it under /checkout (http-proxy-middleware).
 */
export function checkoutPageApp({ store, completion, provider, clock, log, secureCookies }: PageDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The gateway's request id (set by its proxy): page requests log and publish under it too.
  app.use((req, res, next) => {
    res.locals.requestId = saneRequestId(req.get('x-request-id')) ?? '';
    withRequestId(res.locals.requestId, next);
  });
  app.use((_req, res, next) => {
    res.set({ 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY', 'Cache-Control': 'no-store' });
    next();
  });
  app.get('/checkout/assets/checkout.css', (_req, res) => void res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(CSS));
  app.get('/checkout/assets/checkout.js', (_req, res) => void res.type('application/javascript').set('Cache-Control', 'public, max-age=3600').send(JS));
  app.use(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 }));

  const page = (res: Response, status: number, html: string) => void res.status(status).type('html').send(html);

  const issueCsrf = (res: Response, id: string) => {
    const token = randomBytes(32).toString('base64url');
    res.append('Set-Cookie', `${CSRF_COOKIE}=${token}; Path=/checkout/${id}; HttpOnly; SameSite=Strict${secureCookies ? '; Secure' : ''}`);
    return token;
  };

  const load = (req: Request) => {
    const id = String(req.params.id);
    return isId('cs', id) ? store.findById(id) : Promise.resolve(null);
  };

  /** The session if it can be paid, or the page that says why not. */
  function payable(res: Response, s: SessionDoc | null): SessionDoc | undefined {
    if (!s) return void page(res, 404, messagePage('Checkout not found', 'This checkout link is not valid. Ask the seller for a new one.'));
    const status = effectiveStatus(s, clock.now());
    if (status === 'expired') return void page(res, 410, messagePage('This checkout has expired', 'Nothing was charged. Ask the seller for a new checkout link.'));
    if (status === 'complete') return void page(res, 409, messagePage('Already paid', 'This checkout is complete. Your licence key was shown after payment, and the seller has it too.'));
    return s;
  }

  app.get('/checkout/:id', async (req, res) => {
    const s = payable(res, await load(req));
    if (s) page(res, 200, payPage(s, issueCsrf(res, s._id), provider.testMode));
  });

  app.get('/checkout/:id/cancel', async (req, res) => {
    const s = payable(res, await load(req));
    if (!s) return;
    if (s.cancel_url) return void res.redirect(303, s.cancel_url);
    page(res, 200, messagePage('Checkout cancelled', 'Nothing was charged. You can close this page.'));
  });

  app.post('/checkout/:id/pay', async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    if (!same(cookie(req, CSRF_COOKIE), form._csrf)) return page(res, 403, messagePage('This form has expired', 'Reload the checkout page and try again.'));
    // A second tab or a double click after payment: the same licence again, never a second one.
    const current = await load(req);
    if (current?.status === 'complete') return page(res, 200, paidPage(current, await completion.issue(current, res.locals.requestId)));
    const s = payable(res, current);
    if (!s) return;
    let email: string;
    try {
      email = checkEmail('email', typeof form.email === 'string' ? form.email : '');
    } catch (err) {
      return page(res, 400, payPage(s, issueCsrf(res, s._id), provider.testMode, (err as AppError).message));
    }
    const card = typeof form.card === 'string' ? form.card.slice(0, 30) : '';
    const charge = await provider.charge({ sessionId: s._id, amount: s.amount, currency: s.currency, customerEmail: email, card });
    if (!charge.ok) return page(res, 402, payPage({ ...s, customer_email: email }, issueCsrf(res, s._id), provider.testMode, charge.message));
    await completion.markPaid(s, charge.paymentId, email); // false when another tab was first: fine, same payment
    const paid = await store.findById(s._id);
    if (!paid || paid.status !== 'complete') return page(res, 410, messagePage('This checkout has expired', 'Nothing was charged.'));
    page(res, 200, paidPage(paid, await completion.issue(paid, res.locals.requestId)));
  });

  app.use((_req, res) => page(res, 404, messagePage('Not found', 'There is no such page.')));
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    log.error({ err }, 'checkout page error');
    page(res, err instanceof AppError && err.code === 'service_unavailable' ? 503 : 500, messagePage('Something went wrong', 'Nothing more was charged. Please reload the page in a moment.'));
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
