import type { Response, Router } from 'express';
import { AppError } from '@licensing/runtime';
import { GIVEN_MEMBER_ROLES, mayGrant, type Member } from '@licensing/proto';
import { field, type DashboardContext } from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import { badge, csrfInput, date, table } from './widgets';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { html, nothing, type Html } from '../kit/template';

// /dashboard/members: the account's people (docs/api.md, "Members"): invite by e-mail with a role,
// change a role, remove, send an invitation again. An admin's or the owner's; never a role above the
// signed-in member's (the account service refuses it whatever the page offers).

const roleOptions = (s: DashboardSession, selected = '') =>
  GIVEN_MEMBER_ROLES.filter((r) => mayGrant(s.role, r)).map(
    (r) => html`<option value="${r}"${r === selected ? ' selected' : ''}>${r}</option>`,
  );

function memberRow(s: DashboardSession, m: Member): Html {
  const mine = m.role !== 'owner' && mayGrant(s.role, m.role);
  const actions = mine
    ? html`<form method="post" action="/dashboard/members/${m.id}/role" class="button-form">${csrfInput(s)}<label class="sr-only" for="role-${m.id}">Role of ${m.email}</label><select id="role-${m.id}" name="role">${roleOptions(s, m.role)}</select> <button type="submit">Change</button></form>
${m.status === 'invited' ? html`<form method="post" action="/dashboard/members/${m.id}/resend" class="button-form">${csrfInput(s)}<button type="submit">Send again</button></form>` : nothing}
<form method="post" action="/dashboard/members/${m.id}/remove" class="button-form">${csrfInput(s)}<button type="submit" class="danger">Remove</button></form>`
    : nothing;
  return html`<tr data-member-id="${m.id}"><td>${m.email}</td><td>${m.name}</td><td>${m.role}</td><td>${badge(m.status)}</td><td>${date(m.created_at)}</td><td>${actions}</td></tr>`;
}

function membersPage(s: DashboardSession, members: Member[], opts: { notice?: string; error?: string } = {}): Html {
  return layout(
    'Members',
    html`${opts.notice ? html`<p class="notice" role="status">${opts.notice}</p>` : ''}${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
<h2>Members</h2>
<section class="card" aria-labelledby="invite-title">
  <h3 id="invite-title">Invite someone</h3>
  <form method="post" action="/dashboard/members" class="inline">
    ${csrfInput(s)}
    <div><label for="email">E-mail</label><input id="email" name="email" type="email" required maxlength="254"></div>
    <div><label for="role">Role</label><select id="role" name="role">${roleOptions(s, 'developer')}</select></div>
    <button type="submit">Invite</button>
  </form>
  <p class="muted">They get a link, valid 7 days, to choose their password. Roles: admin (everything but the plan and ownership), developer (products, licences, webhooks, checkout), support (licence actions), read_only.</p>
</section>
${table(
  ['E-mail', 'Name', 'Role', 'Status', 'Since', ''],
  members.map((m) => memberRow(s, m)),
)}`,
    s,
    '/dashboard/members',
  );
}

async function show(ctx: DashboardContext, res: Response, s: DashboardSession, status: number, opts = {}) {
  const out = await ctx.clients.accounts.listMembers({
    account_id: s.accountId,
    page: { limit: 100, starting_after: '' },
  });
  ctx.page(res, status, membersPage(s, out.data, opts));
}

/** A refusal of the account service (bad input, a taken address, a role too high) back on the page with its message. */
async function refused(ctx: DashboardContext, res: Response, s: DashboardSession, err: unknown) {
  if (!(err instanceof AppError) || !['invalid_request', 'conflict', 'forbidden', 'not_found'].includes(err.code))
    throw err;
  const status = { invalid_request: 400, conflict: 409, forbidden: 403, not_found: 404 }[err.code as 'conflict'];
  await show(ctx, res, s, status, { error: err.message });
}

const showMembers = (ctx: DashboardContext) => ctx.signedIn(async (_req, res, s) => show(ctx, res, s, 200));

const actor = (s: DashboardSession) => ({ actor: s.userEmail, actor_role: s.role });

const invite = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    try {
      const m = await ctx.clients.accounts.inviteMember({
        account_id: s.accountId,
        email: field(req, 'email', 255).trim(),
        role: field(req, 'role', 20),
        resend: false,
        ...actor(s),
      });
      await show(ctx, res, s, 201, { notice: `Invited ${m.email} as ${m.role}.` });
    } catch (err) {
      await refused(ctx, res, s, err);
    }
  });

type MemberAction = 'role' | 'remove' | 'resend';

const act = (action: MemberAction) => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = String(req.params.id);
    const ids = { account_id: s.accountId, id, actor_role: s.role };
    try {
      if (action === 'role') {
        const m = await ctx.clients.accounts.updateMember({ ...ids, role: field(req, 'role', 20) });
        return await show(ctx, res, s, 200, { notice: `${m.email} is now ${m.role}.` });
      }
      if (action === 'remove') {
        const m = await ctx.clients.accounts.removeMember(ids);
        return await show(ctx, res, s, 200, {
          notice: `Removed ${m.email}: they are signed out and can no longer sign in.`,
        });
      }
      const m = await ctx.clients.accounts.getMember(ids);
      await ctx.clients.accounts.inviteMember({
        account_id: s.accountId,
        email: m.email,
        role: m.role,
        resend: true,
        ...actor(s),
      });
      await show(ctx, res, s, 200, { notice: `Sent ${m.email} a new invitation link.` });
    } catch (err) {
      await refused(ctx, res, s, err);
    }
  });

const MEMBER_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/members', handler: showMembers },
  { method: 'post', path: '/members', handler: invite },
  ...(['role', 'remove', 'resend'] as const).map(
    (a): PageRoute<DashboardContext> => ({
      method: 'post',
      path: `/members/:id/${a}`,
      handler: act(a),
    }),
  ),
];

export function memberPages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, MEMBER_ROUTES, ctx);
}
