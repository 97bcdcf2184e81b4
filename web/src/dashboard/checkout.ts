import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import { checkoutStatuses, isOneOf, type CheckoutSession, type Product } from '@licensing/proto';
import { field, formErrorsOf, queryOf, type DashboardContext, type FormErrors } from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import {
  allErrors,
  badge,
  copyable,
  csrfInput,
  date,
  empty,
  formError,
  input,
  money,
  pager,
  select,
  table,
} from './widgets';
import { html, type Html } from '../kit/template';

// /dashboard/checkout: checkout sessions (status, amount, livemode, the
// licence they issued) and a form that makes a checkout link for a product,
// through the checkout service as POST /api/v1/checkout does.

const PAGE = 25;

interface LinkForm {
  product_id: string;
  success_url: string;
  cancel_url: string;
  customer_email: string;
}

function linkSection(s: DashboardSession, products: Product[], form: LinkForm, errors?: FormErrors): Html {
  const priced = products.filter((p) => p.price);
  if (!priced.length)
    return html`<section class="card"><h2>Create a checkout link</h2>${allErrors(errors)}${empty(html`Only a product with a price can be sold. <a href="/dashboard/products">Give a product a price</a> first.`)}</section>`;
  const options: [string, string][] = [
    ['', 'Choose a product'],
    ...priced.map((p): [string, string] => [
      p.id,
      `${p.name} (${(p.price!.amount / 100).toFixed(2)} ${p.price!.currency})`,
    ]),
  ];
  return html`<section class="card" aria-labelledby="link-title">
  <h2 id="link-title">Create a checkout link</h2>
  ${formError(errors)}
  <form method="post" action="/dashboard/checkout" novalidate>
    ${csrfInput(s)}
    <div class="form-grid">
      ${select({ name: 'product_id', label: 'Product', options, value: form.product_id, errors })}
      ${input({ name: 'success_url', label: 'After payment, go to', type: 'url', value: form.success_url, errors, attrs: html`required maxlength="2048" placeholder="https://example.com/thanks"` })}
      ${input({ name: 'cancel_url', label: 'If cancelled, go to', type: 'url', value: form.cancel_url, errors, hint: '(optional)', attrs: html`maxlength="2048"` })}
      ${input({ name: 'customer_email', label: 'Customer e-mail', type: 'email', value: form.customer_email, errors, hint: '(optional: asked on the page otherwise)', attrs: html`maxlength="254"` })}
    </div>
    <p><button type="submit">Create link</button></p>
  </form>
</section>`;
}

function sessionsPage(
  s: DashboardSession,
  d: {
    sessions: CheckoutSession[];
    products: Product[];
    status: string;
    after: string;
    next: string;
    form: LinkForm;
    errors?: FormErrors;
    created?: CheckoutSession;
  },
): Html {
  const names = new Map(d.products.map((p) => [p.id, p.name]));
  const rows = d.sessions.map(
    (x) =>
      html`<tr data-session-id="${x.id}"><td><code>${x.id}</code></td><td>${names.get(x.product_id) ?? x.product_id}</td><td>${badge(x.status)}</td><td>${money(x.amount, x.currency)}</td><td>${x.livemode ? 'live' : 'test'}</td><td>${x.customer_email || '—'}</td><td>${x.license_key ? html`<a href="/dashboard/licenses/${x.license_key}"><code>${x.license_key}</code></a>` : '—'}</td><td>${date(x.created_at)}</td></tr>`,
  );
  const created = d.created
    ? html`<section class="card secret" role="status" aria-labelledby="created-title">
  <h2 id="created-title">Checkout link for ${names.get(d.created.product_id) ?? d.created.product_id}</h2>
  <p>Send your customer to this page. It is open until ${date(d.created.expires_at)}; paying there issues a licence.</p>
  ${copyable('checkout-url', d.created.url)}
</section>`
    : '';
  return layout(
    'Checkout',
    html`${created}${linkSection(s, d.products, d.form, d.errors)}
<h2>Sessions</h2>
<form method="get" action="/dashboard/checkout" class="search">
  <label for="status">Status</label>
  <select id="status" name="status"><option value="">any</option>${checkoutStatuses.map((x) => html`<option${x === d.status ? ' selected' : ''}>${x}</option>`)}</select>
  <button type="submit">Show</button>
</form>
${d.sessions.length ? html`${table(['Session', 'Product', 'Status', 'Amount', 'Mode', 'Customer', 'Licence', 'Created'], rows)}${pager('/dashboard/checkout', { status: d.status }, d.after, d.next)}` : empty(d.after || d.status ? html`No sessions match. <a href="/dashboard/checkout">Show all</a>.` : 'No checkout sessions yet. Create a link above and share it: each visit to pay opens a session here.')}`,
    s,
    '/dashboard/checkout',
  );
}

export function checkoutPages(r: Router, ctx: DashboardContext): void {
  const { clients, page, signedIn } = ctx;
  const blank: LinkForm = { product_id: '', success_url: '', cancel_url: '', customer_email: '' };

  async function show(
    req: Request,
    res: Response,
    s: DashboardSession,
    status: number,
    extra: { form?: LinkForm; errors?: FormErrors; created?: CheckoutSession } = {},
  ) {
    const filter = isOneOf(checkoutStatuses, queryOf(req, 'status', 20)) ? queryOf(req, 'status', 20) : '';
    const after = isId('cs', queryOf(req, 'starting_after', 64)) ? queryOf(req, 'starting_after', 64) : '';
    const [sessions, products] = await Promise.all([
      clients.checkouts.listSessions({
        account_id: s.accountId,
        page: { limit: PAGE, starting_after: after },
        status: filter,
      }),
      clients.products.listProducts({ account_id: s.accountId, page: { limit: 100, starting_after: '' } }),
    ]);
    page(
      res,
      status,
      sessionsPage(s, {
        sessions: sessions.data,
        products: products.data,
        status: filter,
        after,
        next: sessions.page!.has_more ? sessions.page!.next_cursor : '',
        form: extra.form ?? blank,
        errors: extra.errors,
        created: extra.created,
      }),
    );
  }

  r.get(
    '/checkout',
    signedIn((req, res, s) => show(req, res, s, 200)),
  );

  r.post(
    '/checkout',
    signedIn(async (req, res, s) => {
      const form = {
        product_id: field(req, 'product_id', 64),
        success_url: field(req, 'success_url', 2049).trim(),
        cancel_url: field(req, 'cancel_url', 2049).trim(),
        customer_email: field(req, 'customer_email', 255).trim(),
      };
      const errors: Record<string, string> = {};
      if (!form.product_id) errors.product_id = 'Choose a product.';
      if (!form.success_url) errors.success_url = 'Enter where the customer goes after paying.';
      if (Object.keys(errors).length) return show(req, res, s, 400, { form, errors: { fields: errors } });
      try {
        const created = await clients.checkouts.createSession({
          account_id: s.accountId,
          product_id: form.product_id,
          success_url: form.success_url,
          cancel_url: form.cancel_url,
          customer_email: form.customer_email,
          metadata: {},
          expires_in_minutes: 0,
          idempotency_key: '',
        });
        await show(req, res, s, 201, { created });
      } catch (err) {
        // Another account's product id (a changed form) is not found: 404, said next to the field.
        if (err instanceof AppError && err.code === 'not_found')
          return show(req, res, s, 404, {
            form,
            errors: { fields: { product_id: 'There is no such product in this account. Choose one of yours.' } },
          });
        const e = formErrorsOf(err);
        await show(req, res, s, e.status, { form, errors: e });
      }
    }),
  );
}
