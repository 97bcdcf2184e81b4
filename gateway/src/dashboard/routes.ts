import express, { Router, type NextFunction, type Request, type Response } from 'express';
import {
  AppError,
  addressKey,
  errorSummary,
  formTextProblem,
  isId,
  textProblem,
  type Logger,
} from '@licensing/runtime';
import type { ApiKey } from '@licensing/proto';
import type { Clients } from '../backends/clients';
import type { AttemptThrottle } from '../rate-limits/attempt-throttle';
import { limitsFor } from '../rate-limits/budgets';
import { CSS, JS } from './assets';
import { confirmPage, messagePage, revokeAllPage, settingsPage, signInPage, signUpPage, type NewKey } from './pages';
import { SessionGuard } from './session-guard';
import { signUpConfirmPage, signUpLinkProblemPage, signUpSentPage } from './signup-pages';
import { checkoutPages } from './checkout';
import { field, queryOf, type DashboardContext, type Handler } from './context';
import { pager } from './widgets';
import { licensePages } from './licenses';
import { overviewPages } from './overview';
import { productPages } from './products';
import { webhookPages } from './webhooks';
import {
  PRE_CSRF_COOKIE,
  clearAllCookies,
  clearSessionCookie,
  issuePreSessionCsrf,
  loadSession,
  readCookie,
  sessionOf,
  setSessionCookie,
  tokensMatch,
  type DashboardSession,
} from './session';

export interface DashboardDeps {
  clients: Clients;
  log: Logger;
  /** Secure cookies (everywhere but development and test). */
  secureCookies: boolean;
  signInThrottle: { perEmail: AttemptThrottle; perAddress: AttemptThrottle };
  /** Sign-ups per e-mail and per client address (every attempt counts: scrypt is expensive). */
  signUpThrottle: { perEmail: AttemptThrottle; perAddress: AttemptThrottle };
  /** Unknown session tokens per client address (made-up cookies must not each cost a look-up). */
  unknownSessionThrottle: AttemptThrottle;
  validator?: DashboardContext['validator'];
  hourlyUsage?: DashboardContext['hourlyUsage'];
  /** Counts a signed-in request against the account's limits (metering.ts); false: it answered 429. */
  meter?: (res: Response, s: DashboardSession) => Promise<boolean>;
}

/** API keys per page of Settings (an account has at most a few dozen live ones). */
const KEYS_PAGE = 25;

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Counts one attempt against both throttles atomically; seconds to wait if either refuses, else null. */
async function attempt(
  t: { perEmail: AttemptThrottle; perAddress: AttemptThrottle },
  email: string,
  address: string,
): Promise<number | null> {
  const [byEmail, byAddress] = await Promise.all([t.perEmail.fail(email || '-'), t.perAddress.fail(address)]);
  return byEmail === null && byAddress === null ? null : Math.max(byEmail ?? 0, byAddress ?? 0);
}

/**
 * The account dashboard under /dashboard: sign-up, sign-in and Settings (API
 * keys) here; the overview, products, licences, webhooks and checkout each in
 * a file of their own. Server-rendered; it talks to the services over the
 * same gRPC contracts, with the same account scoping, as the REST API.
 */
export function dashboardRouter({
  clients,
  log,
  secureCookies,
  signInThrottle,
  signUpThrottle,
  unknownSessionThrottle,
  validator,
  hourlyUsage,
  meter,
}: DashboardDeps): Router {
  const r = Router();

  r.use((_req, res, next) => {
    res.set({
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
      'X-Frame-Options': 'DENY',
    });
    next();
  });
  r.get(
    '/assets/app.css',
    (_req, res) => void res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(CSS),
  );
  r.get(
    '/assets/app.js',
    (_req, res) => void res.type('application/javascript').set('Cache-Control', 'public, max-age=3600').send(JS),
  );
  r.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store'); // pages may show a secret once
    next();
  });
  r.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 40 }));
  r.use(refuseControlCharacters);
  r.use(loadSession(clients, new SessionGuard(unknownSessionThrottle), secureCookies));

  const page = (res: Response, status: number, html: string) => void res.status(status).type('html').send(html);

  /**
   * Pages behind sign-in: counted against the account's rate limits (like an API request, before
   * anything else is looked at; signing out is never refused); state-changing requests must also
   * carry the session's CSRF token.
   */
  const signedIn =
    (
      handler: (req: Request, res: Response, s: DashboardSession) => Promise<void>,
      opts: { metered?: boolean } = {},
    ): Handler =>
    async (req, res) => {
      const s = sessionOf(res);
      if (!s) return void res.redirect(303, '/dashboard/signin');
      if (meter && opts.metered !== false && !(await meter(res, s))) return;
      if (
        req.method === 'POST' &&
        !tokensMatch(s.csrfToken, (req.body as Record<string, unknown> | undefined)?._csrf)
      ) {
        return page(
          res,
          403,
          messagePage(
            'This form has expired',
            'The form was not sent from this page or your session changed. Reload the page and try again.',
            s,
          ),
        );
      }
      await handler(req, res, s);
    };

  /** A throttled sign-in or sign-up: logged, counted under its window, Retry-After set; returns the message for the form. */
  const throttled = (res: Response, window: 'signin' | 'signup', wait: number, address: string): string => {
    const what = window === 'signin' ? 'sign-in' : 'sign-up';
    log.warn({ address }, `${what} throttled`);
    res.locals.rateLimitWindow = window;
    res.setHeader('Retry-After', String(wait));
    return `Too many ${what} attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`;
  };

  const preSessionCsrfOk = (req: Request) =>
    tokensMatch(readCookie(req, PRE_CSRF_COOKIE), (req.body as Record<string, unknown> | undefined)?._csrf);

  // Sign-in and sign-up
  r.get('/signin', (_req, res) =>
    sessionOf(res)
      ? res.redirect(303, '/dashboard')
      : page(res, 200, signInPage(issuePreSessionCsrf(res, secureCookies))),
  );
  r.get('/signup', (_req, res) =>
    sessionOf(res)
      ? res.redirect(303, '/dashboard')
      : page(res, 200, signUpPage(issuePreSessionCsrf(res, secureCookies))),
  );

  r.post('/signin', async (req, res) => {
    const email = field(req, 'email', 254).trim().toLowerCase();
    const password = field(req, 'password', 200);
    if (!preSessionCsrfOk(req))
      return page(
        res,
        403,
        signInPage(issuePreSessionCsrf(res, secureCookies), { error: 'The form expired. Please try again.', email }),
      );
    const address = addressKey(req.ip); // IPv6 by its /64
    // Counted before the password is checked, atomically: a parallel burst cannot slip past the limit.
    const wait = await attempt(signInThrottle, email, address);
    if (wait !== null) {
      const error = throttled(res, 'signin', wait, address);
      return page(res, 429, signInPage(issuePreSessionCsrf(res, secureCookies), { error, email }));
    }
    try {
      const s = await clients.accounts.signIn({ email, password });
      // A right password is not a guess: its attempt is given back.
      await Promise.all([signInThrottle.perEmail.forgive(email), signInThrottle.perAddress.forgive(address)]);
      setSessionCookie(res, s.token, s.expires_at, secureCookies);
      res.redirect(303, '/dashboard');
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'unauthorized') throw err;
      page(
        res,
        401,
        signInPage(issuePreSessionCsrf(res, secureCookies), { error: 'Wrong e-mail or password.', email }),
      );
    }
  });

  r.post('/signup', async (req, res) => {
    const values = { account_name: field(req, 'account_name', 100), email: field(req, 'email', 254) };
    if (!preSessionCsrfOk(req))
      return page(
        res,
        403,
        signUpPage(issuePreSessionCsrf(res, secureCookies), { error: 'The form expired. Please try again.', values }),
      );
    const address = addressKey(req.ip); // IPv6 by its /64
    const wait = await attempt(signUpThrottle, values.email.trim().toLowerCase(), address);
    if (wait !== null) {
      const error = throttled(res, 'signup', wait, address);
      return page(res, 429, signUpPage(issuePreSessionCsrf(res, secureCookies), { error, values }));
    }
    try {
      await clients.accounts.signUp({
        account_name: values.account_name,
        email: values.email,
        password: field(req, 'password', 201),
      });
      res.redirect(303, '/dashboard/signup/sent');
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'forbidden', 'service_unavailable'].includes(err.code))
        throw err;
      // Refused input says which field; a registered e-mail is not refused (its owner gets a mail instead).
      // forbidden: this server has no mail transport, so sign-up is closed.
      const status = { invalid_request: 400, forbidden: 403, service_unavailable: 503 }[err.code as 'invalid_request'];
      page(res, status, signUpPage(issuePreSessionCsrf(res, secureCookies), { error: err.message, values }));
    }
  });

  r.get('/signup/sent', (_req, res) => page(res, 200, signUpSentPage()));

  r.get('/signup/confirm', (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token.slice(0, 100) : '';
    if (!token)
      return page(res, 400, signUpLinkProblemPage('This link is incomplete. Copy the whole link from the e-mail.'));
    page(res, 200, signUpConfirmPage(issuePreSessionCsrf(res, secureCookies), token));
  });

  r.post('/signup/confirm', async (req, res) => {
    const token = field(req, 'token', 100);
    if (!preSessionCsrfOk(req))
      return page(res, 403, signUpConfirmPage(issuePreSessionCsrf(res, secureCookies), token));
    try {
      const s = await clients.accounts.confirmSignUp({ token });
      setSessionCookie(res, s.token, s.expires_at, secureCookies);
      res.redirect(303, '/dashboard/settings');
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'conflict'].includes(err.code)) throw err;
      page(res, err.code === 'conflict' ? 409 : 400, signUpLinkProblemPage(err.message));
    }
  });

  r.post(
    '/signout',
    signedIn(
      async (_req, res, s) => {
        await clients.accounts.endSession({ token: s.token });
        clearSessionCookie(res, secureCookies);
        res.redirect(303, '/dashboard/signin');
      },
      { metered: false },
    ),
  );

  const ctx: DashboardContext = { clients, validator, hourlyUsage, page, signedIn };
  overviewPages(r, ctx, limitsOf);
  productPages(r, ctx);
  licensePages(r, ctx);
  webhookPages(r, ctx);
  checkoutPages(r, ctx);

  // Settings: API keys (live ones, a page at a time; revoked ones are in the key actions)
  async function settings(
    res: Response,
    s: DashboardSession,
    status: number,
    extra: { newKey?: NewKey; error?: string; notice?: string } = {},
    after = '',
  ) {
    const [keys, audit] = await Promise.all([
      clients.accounts.listApiKeys({ account_id: s.accountId, page: { limit: KEYS_PAGE, starting_after: after } }),
      clients.accounts.listAuditEntries({ account_id: s.accountId, limit: 10 }),
    ]);
    page(
      res,
      status,
      settingsPage(s, {
        keys: keys.data,
        live: keys.live_keys,
        maxLive: keys.max_live_keys,
        pager: pager('/dashboard/settings', {}, after, keys.page?.next_cursor ?? ''),
        first: !after,
        audit: audit.data,
        limits: limitsOf(s),
        ...extra,
      }),
    );
  }

  /** A refused key action (bad input, the cap, an already revoked key) comes back on Settings with its message. */
  async function refusedOnSettings(res: Response, s: DashboardSession, err: unknown) {
    if (!(err instanceof AppError) || !['invalid_request', 'conflict'].includes(err.code)) throw err;
    await settings(res, s, err.code === 'conflict' ? 409 : 400, { error: err.message });
  }

  r.get(
    '/settings',
    signedIn(async (req, res, s) => {
      const after = queryOf(req, 'starting_after', 64);
      await settings(res, s, 200, {}, isId('key', after) ? after : '');
    }),
  );

  r.post(
    '/settings/keys',
    signedIn(async (req, res, s) => {
      try {
        const out = await clients.accounts.createApiKey({
          account_id: s.accountId,
          scope: field(req, 'scope', 20),
          name: field(req, 'name', 101),
          actor: s.userEmail,
        });
        await settings(res, s, 201, {
          newKey: { secret: out.secret, name: out.api_key!.name, scope: out.api_key!.scope },
        });
      } catch (err) {
        await refusedOnSettings(res, s, err);
      }
    }),
  );

  // Every live key at once (a leaked key nobody can find, a departing employee), after a confirmation.
  // A dashboard session is not a key, so it keeps working; so do apps' licence files.
  r.get(
    '/settings/keys/revoke-all',
    signedIn(async (_req, res, s) => page(res, 200, revokeAllPage(s))),
  );
  r.post(
    '/settings/keys/revoke-all',
    signedIn(async (req, res, s) => {
      if (field(req, 'confirm', 3) !== 'yes') return page(res, 200, revokeAllPage(s));
      const out = await clients.accounts.revokeAllApiKeys({ account_id: s.accountId, actor: s.userEmail });
      await settings(res, s, 200, {
        notice: `Revoked ${out.revoked} API key${out.revoked === 1 ? '' : 's'}. Requests with ${out.revoked === 1 ? 'it' : 'them'} now get 401; generate new keys below.`,
      });
    }),
  );

  /** A key of the signed-in account, looked up by its id, or a 404 page (another account's key is simply not found). */
  async function ownKey(res: Response, s: DashboardSession, id: string): Promise<ApiKey | undefined> {
    const notFound = () =>
      page(res, 404, messagePage('API key not found', 'There is no such API key in this account.', s));
    if (!isId('key', id)) return void notFound();
    try {
      return await clients.accounts.getApiKey({ account_id: s.accountId, key_id: id });
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
      return void notFound();
    }
  }

  for (const action of ['revoke', 'regenerate'] as const) {
    r.get(
      `/settings/keys/:id/${action}`,
      signedIn(async (req, res, s) => {
        const key = await ownKey(res, s, String(req.params.id));
        if (key)
          page(
            res,
            200,
            key.revoked_at
              ? messagePage('Already revoked', 'This API key is already revoked.', s)
              : confirmPage(s, action, key),
          );
      }),
    );
    r.post(
      `/settings/keys/:id/${action}`,
      signedIn(async (req, res, s) => {
        const key = await ownKey(res, s, String(req.params.id));
        if (!key) return;
        if (field(req, 'confirm', 3) !== 'yes') return page(res, 200, confirmPage(s, action, key));
        const request = { account_id: s.accountId, key_id: key.id, actor: s.userEmail };
        try {
          if (action === 'revoke') {
            await clients.accounts.revokeApiKey(request);
            return await settings(res, s, 200, { notice: `Revoked ${key.prefix}…. Requests with it now get 401.` });
          }
          const out = await clients.accounts.regenerateApiKey(request);
          await settings(res, s, 201, {
            newKey: { secret: out.secret, name: out.api_key!.name, scope: out.api_key!.scope },
            notice: `Revoked ${key.prefix}… and issued a replacement.`,
          });
        } catch (err) {
          await refusedOnSettings(res, s, err);
        }
      }),
    );
  }

  r.use((_req, res) => page(res, 404, messagePage('Not found', 'There is no such page.', sessionOf(res))));
  // Dashboard errors are pages, not problem+json; unexpected ones say nothing about internals.
  r.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = (err as { status?: unknown } | null)?.status;
    // A malformed cookie or URL (the router's URIError carries status 400) is the client's mistake.
    if (
      (err instanceof AppError && err.code === 'invalid_request') ||
      err instanceof URIError ||
      (typeof status === 'number' && status >= 400 && status < 500 && status !== 413)
    ) {
      if (err instanceof AppError && err.fieldErrors.some((f) => f.field === 'cookie'))
        clearAllCookies(res, secureCookies);
      // A refused field (a control character in a form) is named, so it can be corrected.
      const fields = err instanceof AppError ? err.fieldErrors.filter((f) => f.field !== 'cookie') : [];
      return page(
        res,
        400,
        messagePage(
          'Bad request',
          fields.length
            ? `${fields.map((f) => f.message).join('; ')}. Go back, correct it and try again.`
            : 'This request could not be understood. Go back to the dashboard and try again.',
          undefined,
        ),
      );
    }
    const app = err instanceof AppError ? err : undefined;
    // Another account's object (an id changed in a URL or form) is simply not there.
    if (app?.code === 'not_found')
      return page(
        res,
        404,
        messagePage(
          'Not found',
          `${app.message[0].toUpperCase()}${app.message.slice(1)} in this account.`,
          sessionOf(res),
        ),
      );
    if (!app || app.code === 'internal') log.error({ err: errorSummary(err) }, 'dashboard error');
    if (app?.code === 'service_unavailable') {
      res.setHeader('Retry-After', '5');
      return page(
        res,
        503,
        messagePage(
          'Temporarily unavailable',
          'Part of the service is not answering. Please try again in a moment.',
          sessionOf(res),
        ),
      );
    }
    if ((err as { type?: string })?.type === 'entity.too.large')
      return page(res, 413, messagePage('Too much data', 'The form was larger than allowed.', sessionOf(res)));
    page(
      res,
      500,
      messagePage('Something went wrong', `Please try again. Reference: ${res.locals.requestId}`, sessionOf(res)),
    );
  });
  return r;
}

/** Form fields that are free text over several lines: tab and line breaks allowed (never other controls). */
const MULTILINE_FIELDS = new Set(['description']);

/**
 * No control characters (the shared rule of @licensing/runtime's text.ts) in any posted field, query
 * value or path segment of the dashboard: a 400 page naming the field, before any handler or service.
 */
function refuseControlCharacters(req: Request, _res: Response, next: NextFunction): void {
  let path: string | undefined;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    path = undefined; // not percent-encoded UTF-8: the router refuses it (a 400 page)
  }
  const bad =
    formTextProblem(req.body as Record<string, unknown> | undefined, MULTILINE_FIELDS) ??
    formTextProblem(req.query as Record<string, unknown>) ??
    (path === undefined ? undefined : textProblem('path', path));
  if (bad) throw new AppError('invalid_request', bad.message, [bad]);
  next();
}

const limitsOf = (s: DashboardSession) =>
  limitsFor({ plan: s.plan, perMinuteOverride: s.perMinuteLimit, perHourOverride: s.perHourLimit });
