import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import type { ApiKey } from '@licensing/proto';
import { limitsFor } from '@licensing/runtime';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { field, queryOf, type DashboardContext } from './context';
import { messagePage } from './pages';
import type { DashboardSession } from './session';
import { confirmPage, revokeAllPage, settingsPage, type NewKey } from './settings-pages';
import { pager } from './widgets';

// Settings: the plan and its limits, and the API keys (live ones, a page at a time; revoked ones
// are in the key actions): generate, revoke, regenerate, revoke all.

/** API keys per page of Settings (an account has at most a few dozen live ones). */
const KEYS_PAGE = 25;

/** The limits a signed-in account works under (its plan, raised by an operator's overrides). */
export const limitsOf = (s: DashboardSession, licensePerMinute?: number) =>
  limitsFor({ plan: s.plan, perMinuteOverride: s.perMinuteLimit, perHourOverride: s.perHourLimit }, licensePerMinute);

/** Where the account's customer portal is: the public address when configured, else the origin the vendor reached. */
export function portalUrlOf(req: Request, accountId: string, publicBaseUrl = ''): string {
  const base = publicBaseUrl.replace(/\/+$/, '') || `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  return `${base}/portal/${accountId}`;
}

async function settings(
  { clients, page, licensePerMinute, publicBaseUrl }: DashboardContext,
  res: Response,
  s: DashboardSession,
  status: number,
  extra: { newKey?: NewKey; error?: string; notice?: string } = {},
  after = '',
) {
  const [keys, audit, account] = await Promise.all([
    clients.accounts.listApiKeys({ account_id: s.accountId, page: { limit: KEYS_PAGE, starting_after: after } }),
    clients.accounts.listAuditEntries({ account_id: s.accountId, limit: 10 }),
    clients.accounts.getAccount({ id: s.accountId }),
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
      limits: limitsOf(s, licensePerMinute),
      supportEmail: account.support_email,
      requireMfa: account.require_mfa,
      portalUrl: portalUrlOf(res.req, s.accountId, publicBaseUrl),
      ...extra,
    }),
  );
}

/** A refused key action (bad input, the cap, an already revoked key) comes back on Settings with its message. */
async function refusedOnSettings(ctx: DashboardContext, res: Response, s: DashboardSession, err: unknown) {
  if (!(err instanceof AppError) || !['invalid_request', 'conflict'].includes(err.code)) throw err;
  await settings(ctx, res, s, err.code === 'conflict' ? 409 : 400, { error: err.message });
}

const showSettings = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const after = queryOf(req, 'starting_after', 64);
    await settings(ctx, res, s, 200, {}, isId('key', after) ? after : '');
  });

// Where buyers write for help: shown in the purchase e-mail (services/notification).
const setSupportEmail = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    try {
      const account = await ctx.clients.accounts.setSupportEmail({
        account_id: s.accountId,
        support_email: field(req, 'support_email', 255).trim(),
      });
      await settings(ctx, res, s, 200, {
        notice: account.support_email ? `Support e-mail set to ${account.support_email}.` : 'Support e-mail removed.',
      });
    } catch (err) {
      await refusedOnSettings(ctx, res, s, err);
    }
  });

// Two-factor sign-in for every member: those without it are sent to enrol at their next sign-in.
const setRequireMfa = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const require = field(req, 'require_mfa', 10) === 'on';
    await ctx.clients.accounts.setRequireMfa({ account_id: s.accountId, require_mfa: require });
    await settings(ctx, res, s, 200, {
      notice: require
        ? 'Two-factor sign-in is now required: members without it set it up at their next sign-in.'
        : 'Two-factor sign-in is no longer required.',
    });
  });

const createKey = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    try {
      const out = await ctx.clients.accounts.createApiKey({
        account_id: s.accountId,
        scope: field(req, 'scope', 20),
        name: field(req, 'name', 101),
        actor: s.userEmail,
      });
      await settings(ctx, res, s, 201, {
        newKey: { secret: out.secret, name: out.api_key!.name, scope: out.api_key!.scope },
      });
    } catch (err) {
      await refusedOnSettings(ctx, res, s, err);
    }
  });

// Every live key at once (a leaked key nobody can find, a departing employee), after a confirmation.
// A dashboard session is not a key, so it keeps working; so do apps' licence files.
const confirmRevokeAll = ({ page, signedIn }: DashboardContext) =>
  signedIn(async (_req, res, s) => page(res, 200, revokeAllPage(s)));

const revokeAll = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    if (field(req, 'confirm', 3) !== 'yes') return ctx.page(res, 200, revokeAllPage(s));
    const out = await ctx.clients.accounts.revokeAllApiKeys({ account_id: s.accountId, actor: s.userEmail });
    await settings(ctx, res, s, 200, {
      notice: `Revoked ${out.revoked} API key${out.revoked === 1 ? '' : 's'}. Requests with ${out.revoked === 1 ? 'it' : 'them'} now get 401; generate new keys below.`,
    });
  });

/** A key of the signed-in account, looked up by its id, or a 404 page (another account's key is simply not found). */
async function ownKey(
  { clients, page }: DashboardContext,
  res: Response,
  s: DashboardSession,
  id: string,
): Promise<ApiKey | undefined> {
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

type KeyAction = 'revoke' | 'regenerate';

const confirmKeyAction = (action: KeyAction) => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const key = await ownKey(ctx, res, s, String(req.params.id));
    if (key)
      ctx.page(
        res,
        200,
        key.revoked_at
          ? messagePage('Already revoked', 'This API key is already revoked.', s)
          : confirmPage(s, action, key),
      );
  });

const keyAction = (action: KeyAction) => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const key = await ownKey(ctx, res, s, String(req.params.id));
    if (!key) return;
    if (field(req, 'confirm', 3) !== 'yes') return ctx.page(res, 200, confirmPage(s, action, key));
    const request = { account_id: s.accountId, key_id: key.id, actor: s.userEmail };
    try {
      if (action === 'revoke') {
        await ctx.clients.accounts.revokeApiKey(request);
        return await settings(ctx, res, s, 200, { notice: `Revoked ${key.prefix}…. Requests with it now get 401.` });
      }
      const out = await ctx.clients.accounts.regenerateApiKey(request);
      await settings(ctx, res, s, 201, {
        newKey: { secret: out.secret, name: out.api_key!.name, scope: out.api_key!.scope },
        notice: `Revoked ${key.prefix}… and issued a replacement.`,
      });
    } catch (err) {
      await refusedOnSettings(ctx, res, s, err);
    }
  });

const SETTINGS_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/settings', handler: showSettings },
  { method: 'post', path: '/settings/support-email', handler: setSupportEmail },
  { method: 'post', path: '/settings/require-mfa', handler: setRequireMfa },
  { method: 'post', path: '/settings/keys', handler: createKey },
  { method: 'get', path: '/settings/keys/revoke-all', handler: confirmRevokeAll },
  { method: 'post', path: '/settings/keys/revoke-all', handler: revokeAll },
  ...(['revoke', 'regenerate'] as const).flatMap((action): PageRoute<DashboardContext>[] => [
    { method: 'get', path: `/settings/keys/:id/${action}`, handler: confirmKeyAction(action) },
    { method: 'post', path: `/settings/keys/:id/${action}`, handler: keyAction(action) },
  ]),
];

export function settingsPages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, SETTINGS_ROUTES, ctx);
}
