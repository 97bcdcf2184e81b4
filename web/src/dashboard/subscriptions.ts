import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import { isOneOf, subscriptionStatuses, type Product, type Subscription } from '@licensing/proto';
import { field, formErrorsOf, idOrNotFound, queryOf, type DashboardContext } from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import { badge, confirmForm, date, empty, money, pager, postButton, table } from './widgets';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { html, nothing, type Html } from '../kit/template';

// /dashboard/subscriptions: the account's subscriptions (filtered by status, product or customer), one
// subscription with its invoices and licence, and cancelling it (at the period end or now), each
// confirmed first. Through the checkout service's SubscriptionService, as /api/v1/subscriptions.

const PAGE = 25;

const period = (x: Subscription) =>
  x.interval_count === 1 ? `/ ${x.interval}` : `/ ${x.interval_count} ${x.interval}s`;

function listPage(
  s: DashboardSession,
  d: {
    subs: Subscription[];
    products: Product[];
    status: string;
    productId: string;
    email: string;
    after: string;
    next: string;
  },
): Html {
  const names = new Map(d.products.map((p) => [p.id, p.name]));
  const rows = d.subs.map(
    (x) =>
      html`<tr data-subscription-id="${x.id}"><td><a href="/dashboard/subscriptions/${x.id}"><code>${x.id}</code></a></td><td>${names.get(x.product_id) ?? x.product_id}</td><td>${badge(x.status)}${x.cancel_at_period_end ? html` <small>cancels at period end</small>` : ''}</td><td>${x.customer_email}</td><td>${x.quantity}</td><td>${money(x.amount, x.currency)} ${period(x)}</td><td>${date(x.current_period_end)}</td><td>${x.livemode ? 'live' : 'test'}</td></tr>`,
  );
  const productOptions = [
    html`<option value="">any</option>`,
    ...d.products.map(
      (p) => html`<option value="${p.id}"${p.id === d.productId ? ' selected' : ''}>${p.name}</option>`,
    ),
  ];
  const filters = { status: d.status, product_id: d.productId, customer_email: d.email };
  return layout(
    'Subscriptions',
    html`<h2>Subscriptions</h2>
<form method="get" action="/dashboard/subscriptions" class="search">
  <label for="status">Status</label>
  <select id="status" name="status"><option value="">any</option>${subscriptionStatuses.map((x) => html`<option${x === d.status ? ' selected' : ''}>${x}</option>`)}</select>
  <label for="product_id">Product</label>
  <select id="product_id" name="product_id">${productOptions}</select>
  <label for="customer_email">Customer</label>
  <input id="customer_email" name="customer_email" type="email" maxlength="254" value="${d.email}">
  <button type="submit">Show</button>
</form>
${d.subs.length ? html`${table(['Subscription', 'Product', 'Status', 'Customer', 'Seats', 'Price', 'Period ends', 'Mode'], rows)}${pager('/dashboard/subscriptions', filters, d.after, d.next)}` : empty(d.after || d.status || d.productId || d.email ? html`No subscriptions match. <a href="/dashboard/subscriptions">Show all</a>.` : 'No subscriptions yet. A product with a recurring price (Products: interval) sold through checkout starts one.')}`,
    s,
    '/dashboard/subscriptions',
  );
}

function detailPage(s: DashboardSession, x: Subscription, product: string, notice?: string, error?: string): Html {
  const invoices = x.invoices.map(
    (i) =>
      html`<tr><td>${date(i.period_start)} – ${date(i.period_end)}</td><td>${money(i.amount, i.currency)}</td><td>${badge(i.status)}</td><td>${date(i.created_at)}</td></tr>`,
  );
  const canCancel = x.status !== 'canceled';
  return layout(
    `Subscription ${x.id}`,
    html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<section class="card" aria-labelledby="sub-title">
  <h2 id="sub-title">Subscription <code>${x.id}</code></h2>
  <dl>
    <dt>Status</dt><dd data-testid="subscription-status">${badge(x.status)}${x.cancel_at_period_end ? ' (cancels at the period end)' : ''}</dd>
    <dt>Product</dt><dd><a href="/dashboard/products/${x.product_id}">${product}</a></dd>
    <dt>Customer</dt><dd>${x.customer_email}</dd>
    <dt>Seats</dt><dd>${x.quantity}</dd>
    <dt>Price</dt><dd>${money(x.amount, x.currency)} ${period(x)}</dd>
    <dt>Current period</dt><dd>${date(x.current_period_start)} – ${date(x.current_period_end)}</dd>
    ${x.trial_end ? html`<dt>Trial ends</dt><dd>${date(x.trial_end)}</dd>` : ''}
    ${x.canceled_at ? html`<dt>Canceled</dt><dd>${date(x.canceled_at)}</dd>` : ''}
    <dt>Licence</dt><dd>${x.license_key ? html`<a href="/dashboard/licenses/${x.license_key}"><code>${x.license_key}</code></a>` : '—'}</dd>
    <dt>Mode</dt><dd>${x.livemode ? 'live' : html`test${x.test_clock ? html` (clock at ${date(x.test_clock)})` : nothing}`}</dd>
  </dl>
  ${
    canCancel
      ? html`<p>${x.cancel_at_period_end ? '' : postButton(s, `/dashboard/subscriptions/${x.id}/cancel?at_period_end=true`, 'Cancel at period end')} ${postButton(s, `/dashboard/subscriptions/${x.id}/cancel?at_period_end=false`, 'Cancel now', 'danger')}</p>`
      : ''
  }
</section>
<h2>Invoices</h2>
${invoices.length ? table(['Period', 'Amount', 'Status', 'Billed'], invoices) : empty('No invoices yet.')}`,
    s,
    '/dashboard/subscriptions',
  );
}

async function productName({ clients }: DashboardContext, s: DashboardSession, id: string): Promise<string> {
  try {
    return (await clients.products.getProduct({ account_id: s.accountId, id })).name;
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return id;
    throw err;
  }
}

async function showDetail(
  ctx: DashboardContext,
  req: Request,
  res: Response,
  s: DashboardSession,
  status: number,
  extra: { notice?: string; error?: string } = {},
) {
  const id = idOrNotFound('sub', String(req.params.id), 'subscription');
  const x = await ctx.clients.subscriptions.getSubscription({ account_id: s.accountId, id });
  ctx.page(res, status, detailPage(s, x, await productName(ctx, s, x.product_id), extra.notice, extra.error));
}

const listSubscriptions = ({ clients, page, signedIn }: DashboardContext) =>
  signedIn(async (req, res, s) => {
    const status = isOneOf(subscriptionStatuses, queryOf(req, 'status', 20)) ? queryOf(req, 'status', 20) : '';
    const productId = isId('prod', queryOf(req, 'product_id', 64)) ? queryOf(req, 'product_id', 64) : '';
    const email = queryOf(req, 'customer_email', 254).trim();
    const after = isId('sub', queryOf(req, 'starting_after', 64)) ? queryOf(req, 'starting_after', 64) : '';
    const [subs, products] = await Promise.all([
      clients.subscriptions.listSubscriptions({
        account_id: s.accountId,
        page: { limit: PAGE, starting_after: after },
        status,
        product_id: productId,
        customer_email: email,
      }),
      clients.products.listProducts({ account_id: s.accountId, page: { limit: 100, starting_after: '' } }),
    ]);
    page(
      res,
      200,
      listPage(s, {
        subs: subs.data,
        products: products.data,
        status,
        productId,
        email,
        after,
        next: subs.page!.has_more ? subs.page!.next_cursor : '',
      }),
    );
  });

const showSubscription = (ctx: DashboardContext) => ctx.signedIn((req, res, s) => showDetail(ctx, req, res, s, 200));

const cancelConfirmPage = (s: DashboardSession, x: Subscription, atPeriodEnd: boolean): Html =>
  layout(
    'Cancel subscription?',
    confirmForm(s, {
      action: `/dashboard/subscriptions/${x.id}/cancel?at_period_end=${atPeriodEnd}`,
      question: html`Cancel <code>${x.id}</code> of ${x.customer_email} ${atPeriodEnd ? 'at the end of its period' : 'now'}?`,
      consequence: atPeriodEnd
        ? `Its licence stays valid until ${x.current_period_end} and then expires; nothing more is billed.`
        : 'Its licence expires now; nothing more is billed. This cannot be undone.',
      button: atPeriodEnd ? 'Cancel at period end' : 'Cancel now',
      danger: !atPeriodEnd,
      back: `/dashboard/subscriptions/${x.id}`,
    }),
    s,
    '/dashboard/subscriptions',
  );

const cancelSubscription = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOrNotFound('sub', String(req.params.id), 'subscription');
    const atPeriodEnd = queryOf(req, 'at_period_end', 5) !== 'false';
    const x = await ctx.clients.subscriptions.getSubscription({ account_id: s.accountId, id });
    if (field(req, 'confirm', 3) !== 'yes') return ctx.page(res, 200, cancelConfirmPage(s, x, atPeriodEnd));
    try {
      await ctx.clients.subscriptions.cancelSubscription({ account_id: s.accountId, id, at_period_end: atPeriodEnd });
      await showDetail(ctx, req, res, s, 200, {
        notice: atPeriodEnd ? 'The subscription cancels at the end of its period.' : 'The subscription is canceled.',
      });
    } catch (err) {
      // Canceled already (409): said on the subscription's page, nothing changed.
      const e = formErrorsOf(err);
      await showDetail(ctx, req, res, s, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

const SUBSCRIPTION_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/subscriptions', handler: listSubscriptions },
  { method: 'get', path: '/subscriptions/:id', handler: showSubscription },
  { method: 'post', path: '/subscriptions/:id/cancel', handler: cancelSubscription },
];

export function subscriptionPages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, SUBSCRIPTION_ROUTES, ctx);
}
