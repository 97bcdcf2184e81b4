import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import { isOneOf, subscriptionStatuses, type Product, type Subscription } from '@licensing/proto';
import { field, formErrorsOf, idOrNotFound, queryOf, type DashboardContext } from './context';
import { h, layout } from './pages';
import type { DashboardSession } from './session';
import { badge, confirmForm, date, empty, money, pager, postButton, table } from './widgets';

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
): string {
  const names = new Map(d.products.map((p) => [p.id, p.name]));
  const rows = d.subs.map(
    (x) =>
      `<tr data-subscription-id="${h(x.id)}"><td><a href="/dashboard/subscriptions/${h(x.id)}"><code>${h(x.id)}</code></a></td><td>${h(names.get(x.product_id) ?? x.product_id)}</td><td>${badge(x.status)}${x.cancel_at_period_end ? ' <small>cancels at period end</small>' : ''}</td><td>${h(x.customer_email)}</td><td>${x.quantity}</td><td>${money(x.amount, x.currency)} ${h(period(x))}</td><td>${date(x.current_period_end)}</td><td>${x.livemode ? 'live' : 'test'}</td></tr>`,
  );
  const productOptions = [
    `<option value="">any</option>`,
    ...d.products.map(
      (p) => `<option value="${h(p.id)}"${p.id === d.productId ? ' selected' : ''}>${h(p.name)}</option>`,
    ),
  ].join('');
  const filters = { status: d.status, product_id: d.productId, customer_email: d.email };
  return layout(
    'Subscriptions',
    `<h2>Subscriptions</h2>
<form method="get" action="/dashboard/subscriptions" class="search">
  <label for="status">Status</label>
  <select id="status" name="status"><option value="">any</option>${subscriptionStatuses.map((x) => `<option${x === d.status ? ' selected' : ''}>${x}</option>`).join('')}</select>
  <label for="product_id">Product</label>
  <select id="product_id" name="product_id">${productOptions}</select>
  <label for="customer_email">Customer</label>
  <input id="customer_email" name="customer_email" type="email" maxlength="254" value="${h(d.email)}">
  <button type="submit">Show</button>
</form>
${d.subs.length ? table(['Subscription', 'Product', 'Status', 'Customer', 'Seats', 'Price', 'Period ends', 'Mode'], rows) + pager('/dashboard/subscriptions', filters, d.after, d.next) : empty(d.after || d.status || d.productId || d.email ? 'No subscriptions match. <a href="/dashboard/subscriptions">Show all</a>.' : 'No subscriptions yet. A product with a recurring price (Products: interval) sold through checkout starts one.')}`,
    s,
    '/dashboard/subscriptions',
  );
}

function detailPage(s: DashboardSession, x: Subscription, product: string, notice?: string, error?: string): string {
  const invoices = x.invoices.map(
    (i) =>
      `<tr><td>${date(i.period_start)} – ${date(i.period_end)}</td><td>${money(i.amount, i.currency)}</td><td>${badge(i.status)}</td><td>${date(i.created_at)}</td></tr>`,
  );
  const canCancel = x.status !== 'canceled';
  return layout(
    `Subscription ${x.id}`,
    `${notice ? `<p class="notice" role="status">${h(notice)}</p>` : ''}${error ? `<p class="error" role="alert">${h(error)}</p>` : ''}
<section class="card" aria-labelledby="sub-title">
  <h2 id="sub-title">Subscription <code>${h(x.id)}</code></h2>
  <dl>
    <dt>Status</dt><dd data-testid="subscription-status">${badge(x.status)}${x.cancel_at_period_end ? ' (cancels at the period end)' : ''}</dd>
    <dt>Product</dt><dd><a href="/dashboard/products/${h(x.product_id)}">${h(product)}</a></dd>
    <dt>Customer</dt><dd>${h(x.customer_email)}</dd>
    <dt>Seats</dt><dd>${x.quantity}</dd>
    <dt>Price</dt><dd>${money(x.amount, x.currency)} ${h(period(x))}</dd>
    <dt>Current period</dt><dd>${date(x.current_period_start)} – ${date(x.current_period_end)}</dd>
    ${x.trial_end ? `<dt>Trial ends</dt><dd>${date(x.trial_end)}</dd>` : ''}
    ${x.canceled_at ? `<dt>Canceled</dt><dd>${date(x.canceled_at)}</dd>` : ''}
    <dt>Licence</dt><dd>${x.license_key ? `<a href="/dashboard/licenses/${h(x.license_key)}"><code>${h(x.license_key)}</code></a>` : '—'}</dd>
    <dt>Mode</dt><dd>${x.livemode ? 'live' : `test${x.test_clock ? ` (clock at ${date(x.test_clock)})` : ''}`}</dd>
  </dl>
  ${
    canCancel
      ? `<p>${x.cancel_at_period_end ? '' : postButton(s, `/dashboard/subscriptions/${x.id}/cancel?at_period_end=true`, 'Cancel at period end')} ${postButton(s, `/dashboard/subscriptions/${x.id}/cancel?at_period_end=false`, 'Cancel now', 'danger')}</p>`
      : ''
  }
</section>
<h2>Invoices</h2>
${invoices.length ? table(['Period', 'Amount', 'Status', 'Billed'], invoices) : empty('No invoices yet.')}`,
    s,
    '/dashboard/subscriptions',
  );
}

export function subscriptionPages(r: Router, ctx: DashboardContext): void {
  const { clients, page, signedIn } = ctx;

  async function productName(s: DashboardSession, id: string): Promise<string> {
    try {
      return (await clients.products.getProduct({ account_id: s.accountId, id })).name;
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') return id;
      throw err;
    }
  }

  async function showDetail(
    req: Request,
    res: Response,
    s: DashboardSession,
    status: number,
    extra: { notice?: string; error?: string } = {},
  ) {
    const id = idOrNotFound('sub', String(req.params.id), 'subscription');
    const x = await clients.subscriptions.getSubscription({ account_id: s.accountId, id });
    page(res, status, detailPage(s, x, await productName(s, x.product_id), extra.notice, extra.error));
  }

  r.get(
    '/subscriptions',
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
    }),
  );

  r.get(
    '/subscriptions/:id',
    signedIn((req, res, s) => showDetail(req, res, s, 200)),
  );

  const confirm = (s: DashboardSession, x: Subscription, atPeriodEnd: boolean) =>
    layout(
      'Cancel subscription?',
      confirmForm(s, {
        action: `/dashboard/subscriptions/${x.id}/cancel?at_period_end=${atPeriodEnd}`,
        question: `Cancel <code>${h(x.id)}</code> of ${h(x.customer_email)} ${atPeriodEnd ? 'at the end of its period' : 'now'}?`,
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

  r.post(
    '/subscriptions/:id/cancel',
    signedIn(async (req, res, s) => {
      const id = idOrNotFound('sub', String(req.params.id), 'subscription');
      const atPeriodEnd = queryOf(req, 'at_period_end', 5) !== 'false';
      const x = await clients.subscriptions.getSubscription({ account_id: s.accountId, id });
      if (field(req, 'confirm', 3) !== 'yes') return page(res, 200, confirm(s, x, atPeriodEnd));
      try {
        await clients.subscriptions.cancelSubscription({
          account_id: s.accountId,
          id,
          at_period_end: atPeriodEnd,
        });
        await showDetail(req, res, s, 200, {
          notice: atPeriodEnd ? 'The subscription cancels at the end of its period.' : 'The subscription is canceled.',
        });
      } catch (err) {
        // Canceled already (409): said on the subscription's page, nothing changed.
        const e = formErrorsOf(err);
        await showDetail(req, res, s, e.status, { error: e.form ?? Object.values(e.fields)[0] });
      }
    }),
  );
}
