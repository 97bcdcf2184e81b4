import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { AppError } from '@licensing/runtime';
import type { License, LicenseBatch, Product } from '@licensing/proto';
import { emailsOfCsv } from './csv-emails';
import { field, formErrorsOf, idOrNotFound, type DashboardContext, type FormErrors } from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import { badge, csrfInput, empty, formError, input, notice, select, table, textarea } from './widgets';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { html, type Html } from '../kit/template';
import { keyOf } from './licenses';

// /dashboard/licenses/batch: issue licences to a CSV of e-mails (the REST batch job), and its progress;
// /dashboard/licenses/{key}/reroll: a new key for a licence, after a confirmation. Registered before
// licenses.ts's pages, so "batch" is never taken for a key.

/** The pasted CSV: 1,000 rows of long addresses fit (the form's own body limit is set in routes.ts). */
export const CSV_TEXT_MAX = 300_000;

interface BatchForm {
  product_id: string;
  emails: string;
  token: string;
}

function batchForm(s: DashboardSession, products: Product[], form: BatchForm, errors?: FormErrors): Html {
  const options: [string, string][] = [
    ['', 'Choose a product'],
    ...products.map((p): [string, string] => [p.id, p.name]),
  ];
  return layout(
    'Issue licences in bulk',
    html`<section class="card" aria-labelledby="bulk-title">
  <h2 id="bulk-title">Issue licences in bulk</h2>
  <p class="muted">Paste a CSV with one row per licence: its first column (or the one headed <code>email</code>) is the customer’s e-mail. Up to 1,000 rows; every row is checked before any licence is issued.</p>
  ${formError(errors)}
  <form method="post" action="/dashboard/licenses/batch" novalidate>
    ${csrfInput(s)}
    <input type="hidden" name="batch_token" value="${form.token}">
    ${select({ name: 'product_id', label: 'Product', options, value: form.product_id, errors })}
    ${textarea({ name: 'emails', label: 'CSV of e-mails', value: form.emails, errors, hint: '(one row per licence)', attrs: html`maxlength="${CSV_TEXT_MAX}" rows="12"` })}
    <p><button type="submit">Issue licences</button> <a href="/dashboard/licenses">Cancel</a></p>
  </form>
</section>`,
    s,
    '/dashboard/licenses',
  );
}

function batchPage(s: DashboardSession, b: LicenseBatch, message?: string): Html {
  const rows = b.results.map(
    (r) =>
      html`<tr><td>${r.index + 1}</td><td>${badge(r.status)}</td><td>${r.key ? html`<a href="/dashboard/licenses/${r.key}"><code>${r.key}</code></a>` : ''}</td><td>${r.error}</td></tr>`,
  );
  const waiting = b.total - b.issued - b.failed;
  return layout(
    'Licence batch',
    html`${notice(message)}<section class="card" aria-labelledby="batch-title">
  <h2 id="batch-title">Licence batch <code>${b.id}</code></h2>
  <p data-testid="batch-status">${badge(b.status)} ${b.issued} of ${b.total} issued${b.failed ? `, ${b.failed} failed` : ''}${waiting ? `, ${waiting} waiting` : ''}.</p>
  ${b.status === 'running' ? html`<p><a href="/dashboard/licenses/batch/${b.id}">Refresh</a> to see its progress.</p>` : ''}
</section>
${rows.length ? table(['Row', 'Status', 'Key', 'Problem'], rows) : empty('No items.')}`,
    s,
    '/dashboard/licenses',
  );
}

function rerollPage(s: DashboardSession, l: License, form: { grace_hours: string }, errors?: FormErrors): Html {
  return layout(
    'Give the licence a new key?',
    html`<form method="post" action="/dashboard/licenses/${l.key}/reroll" class="card narrow" novalidate>
  ${csrfInput(s)}
  <input type="hidden" name="confirm" value="yes">
  ${formError(errors)}
  <p>Give <code>${l.key}</code> of ${l.customer_email} a new key? Everything else stays: its machines, entitlements, metadata and expiry. Apps using the old key are told to update it, and it stops working when the grace below ends.</p>
  ${input({ name: 'grace_hours', label: 'Hours the old key keeps working', value: form.grace_hours, errors, hint: '(0 to 720; 0: it stops at once)', attrs: html`inputmode="numeric"` })}
  <p><label><input type="checkbox" name="send_email" value="yes"> E-mail the new key to the customer</label></p>
  <button type="submit" class="danger">Give it a new key</button>
  <a href="/dashboard/licenses/${l.key}">Cancel</a>
</form>`,
    s,
    '/dashboard/licenses',
  );
}

const allProducts = async ({ clients }: DashboardContext, s: DashboardSession) =>
  (await clients.products.listProducts({ account_id: s.accountId, page: { limit: 100, starting_after: '' } })).data;
const newToken = () => randomBytes(16).toString('hex');

const showBatchForm = (ctx: DashboardContext) =>
  ctx.signedIn(async (_req, res, s) =>
    ctx.page(res, 200, batchForm(s, await allProducts(ctx, s), { product_id: '', emails: '', token: newToken() })),
  );

/** The service's refusal of some rows (licenses[3].customer_email), said as the rows of the text they came from. */
function rowsRefused(e: FormErrors, rows: ReturnType<typeof emailsOfCsv>): string {
  const bad = Object.keys(e.fields)
    .map((f) => /^licenses\[(\d+)\]/.exec(f))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => `line ${rows.lines[Number(m[1])]} (${rows.emails[Number(m[1])]})`);
  return bad.length
    ? `Not an e-mail address: ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', …' : ''}.`
    : (e.form ?? Object.values(e.fields)[0] ?? 'Check the rows.');
}

const issueBatch = (ctx: DashboardContext) =>
  ctx.signedIn(async (req: Request, res: Response, s) => {
    const sent = field(req, 'batch_token', 64);
    const form: BatchForm = {
      product_id: field(req, 'product_id', 64),
      emails: field(req, 'emails', CSV_TEXT_MAX),
      token: /^[0-9a-f]{32}$/.test(sent) ? sent : newToken(),
    };
    const refuse = async (status: number, errors: FormErrors) =>
      ctx.page(res, status, batchForm(s, await allProducts(ctx, s), form, errors));
    if (!form.product_id) return refuse(400, { fields: { product_id: 'Choose a product.' } });
    let rows: ReturnType<typeof emailsOfCsv>;
    try {
      rows = emailsOfCsv(form.emails);
    } catch (err) {
      return refuse(400, { fields: { emails: (err as Error).message } });
    }
    try {
      const batch = await ctx.clients.licenses.createLicenseBatch({
        account_id: s.accountId,
        product_id: form.product_id,
        licenses: rows.emails.map((customer_email) => ({
          customer_email,
          metadata: {},
          entitlements: [],
          send_email: false,
        })),
        // The form's token: submitting it twice is the same batch.
        idempotency_key: `dashboard:${form.token}`,
      });
      res.redirect(303, `/dashboard/licenses/batch/${batch.id}`);
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found')
        return refuse(404, {
          fields: { product_id: 'There is no such product in this account. Choose one of yours.' },
        });
      const e = formErrorsOf(err);
      return refuse(e.status, { fields: { emails: rowsRefused(e, rows) } });
    }
  });

const showBatch = ({ clients, page, signedIn }: DashboardContext) =>
  signedIn(async (req, res, s) => {
    const id = idOrNotFound('lbat', String(req.params.id), 'batch');
    page(res, 200, batchPage(s, await clients.licenses.getLicenseBatch({ account_id: s.accountId, id })));
  });

const confirmReroll = ({ clients, page, signedIn }: DashboardContext) =>
  signedIn(async (req, res, s) => {
    const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
    page(res, 200, rerollPage(s, license, { grace_hours: '24' }));
  });

const reroll = ({ clients, page, signedIn }: DashboardContext) =>
  signedIn(async (req, res, s) => {
    const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
    const form = { grace_hours: field(req, 'grace_hours', 10).trim() };
    if (field(req, 'confirm', 3) !== 'yes') return page(res, 200, rerollPage(s, license, form));
    if (!/^\d{1,9}$/.test(form.grace_hours))
      return page(
        res,
        400,
        rerollPage(s, license, form, { fields: { grace_hours: 'Enter a whole number of hours from 0 to 720.' } }),
      );
    try {
      const rerolled = await clients.licenses.rerollLicense({
        account_id: s.accountId,
        key: license.key,
        grace_hours: Number(form.grace_hours),
        // Asked on license.rerolled, in the licence's own write (the notification service queues it).
        send_email: field(req, 'send_email', 3) === 'yes',
      });
      res.redirect(303, `/dashboard/licenses/${rerolled.key}`);
    } catch (err) {
      const e = formErrorsOf(err);
      page(res, e.status, rerollPage(s, license, form, e));
    }
  });

const BULK_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/licenses/batch', handler: showBatchForm },
  { method: 'post', path: '/licenses/batch', handler: issueBatch },
  { method: 'get', path: '/licenses/batch/:id', handler: showBatch },
  { method: 'get', path: '/licenses/:key/reroll', handler: confirmReroll },
  { method: 'post', path: '/licenses/:key/reroll', handler: reroll },
];

export function licenseBulkPages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, BULK_ROUTES, ctx);
}
