import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import {
  allowedActions,
  entitlementsFromText,
  entitlementsProblem,
  isOneOf,
  licenseActions,
  licenseStatuses,
  parseLicenseKey,
  storedStatusOf,
  withPolicyDefaults,
  type Activation,
  type License,
  type LicenseAction,
  type Product,
  type RecentValidation,
  MAX_LICENSE_KEY_LENGTH,
} from '@licensing/proto';
import {
  field,
  formErrorsOf,
  idOrNotFound,
  queryOf,
  wholeNumber,
  type DashboardContext,
  type FormErrors,
} from './context';
import { h, layout } from './pages';
import type { DashboardSession } from './session';
import {
  allErrors,
  badge,
  confirmForm,
  copyable,
  csrfInput,
  date,
  empty,
  formError,
  input,
  notice,
  pager,
  select,
  table,
  textarea,
} from './widgets';
import { ENTITLEMENTS_TEXT_MAX } from './products';

// /dashboard/licenses: issue, search, and one licence's page with its
// activations, lifecycle actions (each confirmed first) and its licence file.
// Every call is the licence service's, scoped to the signed-in account, and
// tells the gateway's validation cache, as the REST routes do.

const PAGE = 25;

/** How the dashboard words each lifecycle action (which ones a licence allows is the lifecycle rules'). */
const ACTIONS: Record<LicenseAction, { verb: string; done: string; consequence: string; danger: boolean }> = {
  suspend: {
    verb: 'Suspend',
    done: 'Suspended',
    consequence: 'Validation answers "suspended" until you reinstate it.',
    danger: true,
  },
  reinstate: { verb: 'Reinstate', done: 'Reinstated', consequence: 'It validates again as before.', danger: false },
  revoke: {
    verb: 'Revoke',
    done: 'Revoked',
    consequence: 'It stops validating for good. This cannot be undone.',
    danger: true,
  },
  renew: {
    verb: 'Renew',
    done: 'Renewed',
    consequence: 'Its expiry moves on by the product’s licence duration, under the product’s current policy.',
    danger: false,
  },
};

/**
 * The actions the lifecycle rules (proto/rules/lifecycle.ts) allow this licence, which the licence
 * service applies too: a renewal takes the product's current policy when the page has the product.
 */
function allowed(l: License, product?: Product): LicenseAction[] {
  if (!isOneOf(licenseStatuses, l.status)) return [];
  const state = { status: storedStatusOf(l.status), expires_at: l.expires_at ? new Date(l.expires_at) : null };
  return allowedActions(state, withPolicyDefaults(product?.policy ?? l.policy));
}

interface IssueForm {
  product_id: string;
  customer_email: string;
}

const productOptions = (products: Product[]): [string, string][] => [
  ['', 'Choose a product'],
  ...products.map((p): [string, string] => [p.id, p.name]),
];

function issueSection(s: DashboardSession, products: Product[], form: IssueForm, errors?: FormErrors): string {
  if (!products.length)
    return `<section class="card"><h2>Issue a licence</h2>${allErrors(errors)}${empty('Licences are issued for a product, and there is none yet. <a href="/dashboard/products">Create a product</a> first.')}</section>`;
  return `<section class="card" aria-labelledby="issue-title">
  <h2 id="issue-title">Issue a licence</h2>
  ${formError(errors)}
  <form method="post" action="/dashboard/licenses" class="inline" novalidate>
    ${csrfInput(s)}
    ${select({ name: 'product_id', label: 'Product', options: productOptions(products), value: form.product_id, errors })}
    ${input({ name: 'customer_email', label: 'Customer e-mail', type: 'email', value: form.customer_email, errors, attrs: 'maxlength="254" autocomplete="off"' })}
    <div><button type="submit">Issue licence</button></div>
  </form>
  <p class="muted">Many at once? <a href="/dashboard/licenses/batch">Issue licences to a CSV of e-mails</a>.</p>
</section>`;
}

function licenseRows(licenses: License[], products: Map<string, string>): string[] {
  return licenses.map(
    (l) =>
      `<tr data-license-key="${h(l.key)}"><td><a href="/dashboard/licenses/${h(l.key)}"><code>${h(l.key)}</code></a></td><td>${h(l.customer_email)}</td><td>${h(products.get(l.product_id) ?? l.product_id)}</td><td>${badge(l.status)}</td><td>${l.expires_at ? date(l.expires_at) : 'never'}</td><td>${date(l.created_at)}</td></tr>`,
  );
}

interface ListData {
  q: string;
  status: string;
  productId: string;
  after: string;
  next: string;
  licenses: License[];
  products: Product[];
  form: IssueForm;
  errors?: FormErrors;
  message?: string;
  issued?: License;
}

function listPage(s: DashboardSession, d: ListData): string {
  const names = new Map(d.products.map((p) => [p.id, p.name]));
  const filtered = !!(d.q || d.status || d.productId);
  const issued = d.issued
    ? `<section class="card secret" role="status" aria-labelledby="issued-title">
  <h2 id="issued-title">Licence issued to ${h(d.issued.customer_email)}</h2>
  <p>Send this key to your customer. You can find it again here at any time.</p>
  ${copyable('new-license-key', d.issued.key)}
  <p><a href="/dashboard/licenses/${h(d.issued.key)}">Open the licence</a></p>
</section>`
    : '';
  const list = d.licenses.length
    ? table(['Key', 'Customer', 'Product', 'Status', 'Expires', 'Issued'], licenseRows(d.licenses, names)) +
      pager('/dashboard/licenses', { q: d.q, status: d.status, product_id: d.productId }, d.after, d.next)
    : empty(
        filtered
          ? 'No licence matches. Check the key or e-mail for typos, or <a href="/dashboard/licenses">show all licences</a>.'
          : d.products.length
            ? 'No licences yet. Issue one above: the customer gets a key to enter in your app.'
            : 'No licences yet.',
      );
  return layout(
    'Licences',
    `${issued}${issueSection(s, d.products, d.form, d.errors)}
<h2>Find licences</h2>
<form method="get" action="/dashboard/licenses" class="search" role="search">
  <label for="q">Licence key or customer e-mail</label>
  <input id="q" name="q" value="${h(d.q)}" maxlength="254">
  <label for="status">Status</label>
  <select id="status" name="status"><option value="">any</option>${licenseStatuses.map((x) => `<option${x === d.status ? ' selected' : ''}>${x}</option>`).join('')}</select>
  ${d.productId ? `<input type="hidden" name="product_id" value="${h(d.productId)}">` : ''}
  <button type="submit">Search</button>
</form>
${d.message ? `<p class="muted">${h(d.message)}</p>` : ''}
${list}`,
    s,
    '/dashboard/licenses',
  );
}

function detailPage(
  s: DashboardSession,
  d: {
    license: License;
    product?: Product;
    activations: Activation[];
    recent: RecentValidation[];
    after: string;
    next: string;
    notice?: string;
    error?: string;
    fileErrors?: FormErrors;
    file?: { fingerprint: string; ttl_days: string };
    entitlementErrors?: FormErrors;
    /** The extras as typed, when a refused form comes back. */
    extras?: string;
  },
): string {
  const l = d.license;
  const base = `/dashboard/licenses/${l.key}`;
  const actions = allowed(l, d.product)
    .map((a) => `<a class="${ACTIONS[a].danger ? 'danger' : ''}" href="${h(base)}/${a}">${ACTIONS[a].verb}</a>`)
    .join(' ');
  const pol = l.policy;
  const rows = d.activations.map(
    (a) =>
      `<tr data-activation-id="${h(a.id)}"><td><code>${h(a.fingerprint)}</code></td><td>${h(a.name) || '<span class="muted">unnamed</span>'}</td><td>${date(a.created_at)}${a.lease_expires_at ? `<br><span class="muted">floating seat, lease until ${date(a.lease_expires_at)}</span>` : ''}</td><td><a href="${h(base)}/activations/${h(a.id)}/deactivate">Deactivate</a></td></tr>`,
  );
  return layout(
    'Licence',
    `${notice(d.notice)}${d.error ? `<p class="error" role="alert">${h(d.error)}</p>` : ''}
<section class="card" aria-labelledby="facts-title">
  <h2 id="facts-title" class="sr-only">Facts</h2>
  <dl class="facts">
    <dt>Key</dt><dd>${copyable('license-key', l.key)}</dd>
    <dt>Status</dt><dd data-testid="license-status">${badge(l.status)}</dd>
    <dt>Customer</dt><dd>${h(l.customer_email)}</dd>
    <dt>Product</dt><dd>${d.product ? `<a href="/dashboard/products/${h(d.product.id)}">${h(d.product.name)}</a>` : `<code>${h(l.product_id)}</code>`}</dd>
    <dt>Expires</dt><dd data-testid="license-expiry">${l.expires_at ? date(l.expires_at) : 'never (perpetual)'}</dd>
    <dt>Issued</dt><dd>${date(l.created_at)}</dd>
    <dt>Last validated</dt><dd data-testid="last-validated">${l.last_validated_at ? date(l.last_validated_at) : 'never: your app has not checked this key yet'}</dd>
    <dt>Policy</dt><dd>${h([pol?.max_activations ? `up to ${pol.max_activations} machines` : 'unlimited machines', pol?.grace_days ? `${pol.grace_days} days grace` : '', pol?.require_activation ? 'activation required' : '', pol?.lease_seconds ? `floating seats (${pol.lease_seconds} s lease)` : ''].filter(Boolean).join(', '))}</dd>
  </dl>
  ${actions || l.status !== 'revoked' ? `<p class="button-row actions">${actions}${l.status !== 'revoked' ? ` <a class="danger" href="${h(base)}/reroll">New key</a>` : ''}</p>` : ''}
</section>
<section class="card" aria-labelledby="entitlements-title">
  <h2 id="entitlements-title">Entitlements</h2>
  <p data-testid="license-entitlements">${l.entitlements.length ? l.entitlements.map((e) => `<code>${h(e)}</code>`).join(' ') : '<span class="muted">none</span>'}</p>
  <p class="muted">Its product’s current entitlements, and those of its own below. Your app asks for them with <code>POST /api/v1/keys/validate</code> <code>{"entitlements": [...]}</code>.</p>
  ${formError(d.entitlementErrors)}
  <form method="post" action="${h(base)}/entitlements" novalidate>
    ${csrfInput(s)}
    ${textarea({ name: 'entitlements', label: 'This licence’s own entitlements', value: d.extras ?? l.extra_entitlements.join(', '), errors: d.entitlementErrors, hint: '(on top of its product’s; separated by commas, spaces or lines; empty: none)', attrs: `maxlength="${ENTITLEMENTS_TEXT_MAX}"` })}
    <p><button type="submit">Save entitlements</button></p>
  </form>
</section>
<section aria-labelledby="machines-title">
  <h2 id="machines-title">Activations (${l.activations})</h2>
  ${d.activations.length ? table(['Fingerprint', 'Name', 'Activated', '<span class="sr-only">Actions</span>'], rows) + pager(base, {}, d.after, d.next) : empty(d.after ? `No more activations. <a href="${h(base)}">First page</a>.` : 'No machine is activated. Your app activates one with <code>POST /api/v1/licenses/{key}/activations</code>.')}
</section>
<section aria-labelledby="recent-title">
  <h2 id="recent-title">Recent validations</h2>
  ${
    d.recent.length
      ? table(
          ['Latest', 'Answer', 'Machine', 'Times that hour'],
          d.recent.map(
            (v) =>
              `<tr><td>${date(v.last_at)}</td><td>${badge(v.code)}</td><td>${v.fingerprint ? `<code>${h(v.fingerprint)}</code>` : '<span class="muted">none given</span>'}</td><td>${v.count}</td></tr>`,
          ),
        )
      : empty('No validations yet. They appear here a few seconds after your app checks this key.')
  }
</section>
<section class="card" aria-labelledby="file-title">
  <h2 id="file-title">Licence file</h2>
  <p class="muted">A signed file your app verifies offline with the product’s public key.</p>
  ${formError(d.fileErrors)}
  <form method="post" action="${h(base)}/file" class="inline" novalidate>
    ${csrfInput(s)}
    ${input({ name: 'fingerprint', label: 'Machine fingerprint', value: d.file?.fingerprint, errors: d.fileErrors, hint: pol?.require_activation ? '(required: an activated machine)' : '(optional)', attrs: 'maxlength="200"' })}
    ${input({ name: 'ttl_days', label: 'Valid for days', value: d.file?.ttl_days ?? '30', errors: d.fileErrors, attrs: 'inputmode="numeric"' })}
    <div><button type="submit">Download licence file</button></div>
  </form>
</section>
<section class="card" aria-labelledby="email-title">
  <h2 id="email-title">Purchase e-mail</h2>
  <p class="muted">Sends the customer the key, expiry, portal link and licence file again. <a href="/dashboard/emails">E-mail log</a>.</p>
  <form method="post" action="${h(base)}/email" class="inline" novalidate>
    ${csrfInput(s)}
    <div><button type="submit">Send the e-mail again</button></div>
  </form>
</section>`,
    s,
    '/dashboard/licenses',
  );
}

export function licensePages(r: Router, ctx: DashboardContext): void {
  const { clients, page, signedIn } = ctx;
  const allProducts = async (s: DashboardSession) =>
    (await clients.products.listProducts({ account_id: s.accountId, page: { limit: 100, starting_after: '' } })).data;

  async function showList(
    req: Request,
    res: Response,
    s: DashboardSession,
    status: number,
    extra: { form?: IssueForm; errors?: FormErrors; issued?: License } = {},
  ) {
    const q = queryOf(req, 'q', 254);
    const statusFilter = isOneOf(licenseStatuses, queryOf(req, 'status', 20)) ? queryOf(req, 'status', 20) : '';
    const productId = isId('prod', queryOf(req, 'product_id', 64)) ? queryOf(req, 'product_id', 64) : '';
    const after = isId('lic', queryOf(req, 'starting_after', 64)) ? queryOf(req, 'starting_after', 64) : '';
    const base = {
      q,
      status: statusFilter,
      productId,
      after,
      next: '',
      form: extra.form ?? { product_id: productId, customer_email: '' },
      errors: extra.errors,
      issued: extra.issued,
    };
    const products = await allProducts(s);
    if (q && !q.includes('@')) {
      // A key: one exact look-up (keys are unique per account).
      try {
        const license = await clients.licenses.getLicense({
          account_id: s.accountId,
          key: q.slice(0, MAX_LICENSE_KEY_LENGTH),
        });
        return page(res, status, listPage(s, { ...base, products, licenses: [license] }));
      } catch (err) {
        if (!(err instanceof AppError) || !['not_found', 'invalid_request'].includes(err.code)) throw err;
        return page(
          res,
          status,
          listPage(s, { ...base, products, licenses: [], message: 'No licence with this key in this account.' }),
        );
      }
    }
    const out = await clients.licenses.listLicenses({
      account_id: s.accountId,
      page: { limit: PAGE, starting_after: after },
      product_id: productId,
      customer_email: q,
      status: statusFilter,
    });
    page(
      res,
      status,
      listPage(s, {
        ...base,
        products,
        licenses: out.data,
        next: out.page!.has_more ? out.page!.next_cursor : '',
        message: q && !out.data.length ? `No licences for ${q}.` : undefined,
      }),
    );
  }

  r.get(
    '/licenses',
    signedIn((req, res, s) => showList(req, res, s, 200)),
  );

  r.post(
    '/licenses',
    signedIn(async (req, res, s) => {
      const form = {
        product_id: field(req, 'product_id', 64),
        customer_email: field(req, 'customer_email', 255).trim(),
      };
      const errors: Record<string, string> = {};
      if (!form.product_id) errors.product_id = 'Choose a product.';
      if (!form.customer_email) errors.customer_email = 'Enter the customer’s e-mail address.';
      if (Object.keys(errors).length) return showList(req, res, s, 400, { form, errors: { fields: errors } });
      try {
        const license = await clients.licenses.createLicense({
          account_id: s.accountId,
          product_id: form.product_id,
          customer_email: form.customer_email,
          idempotency_key: '',
          send_email: false,
        });
        await showList(req, res, s, 201, { issued: license });
      } catch (err) {
        // Another account's product id (a changed form) is not found: 404, said next to the field.
        if (err instanceof AppError && err.code === 'not_found')
          return showList(req, res, s, 404, {
            form,
            errors: { fields: { product_id: 'There is no such product in this account. Choose one of yours.' } },
          });
        const e = formErrorsOf(err);
        await showList(req, res, s, e.status, { form, errors: e });
      }
    }),
  );

  /** The licence key in the URL, canonical; a malformed one names no licence (404), like another account's. */
  const keyOf = (req: Request) => {
    const parsed = parseLicenseKey(String(req.params.key).slice(0, MAX_LICENSE_KEY_LENGTH + 1));
    if (!parsed.ok) throw AppError.notFound('licence');
    return parsed.key;
  };

  async function showDetail(
    req: Request,
    res: Response,
    s: DashboardSession,
    status: number,
    extra: {
      notice?: string;
      error?: string;
      fileErrors?: FormErrors;
      file?: { fingerprint: string; ttl_days: string };
      entitlementErrors?: FormErrors;
      extras?: string;
    } = {},
  ) {
    const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
    const after = isId('act', queryOf(req, 'starting_after', 64)) ? queryOf(req, 'starting_after', 64) : '';
    const [product, activations, recent] = await Promise.all([
      // Its name, and its current policy for whether Renew applies: without the product service the
      // page still shows the licence (Renew then judged by the licence's own policy).
      clients.products.getProduct({ account_id: s.accountId, id: license.product_id }).catch(() => undefined),
      clients.licenses.listActivations({
        account_id: s.accountId,
        key: license.key,
        page: { limit: PAGE, starting_after: after },
      }),
      clients.licenses.listRecentValidations({ account_id: s.accountId, key: license.key, limit: 10 }),
    ]);
    page(
      res,
      status,
      detailPage(s, {
        license,
        product,
        activations: activations.data,
        recent: recent.data,
        after,
        next: activations.page!.has_more ? activations.page!.next_cursor : '',
        ...extra,
      }),
    );
  }

  r.get(
    '/licenses/:key',
    signedIn((req, res, s) => showDetail(req, res, s, 200)),
  );

  for (const action of licenseActions) {
    const a = ACTIONS[action];
    const confirm = (s: DashboardSession, l: License) =>
      layout(
        `${a.verb} licence?`,
        confirmForm(s, {
          action: `/dashboard/licenses/${l.key}/${action}`,
          question: `${a.verb} <code>${h(l.key)}</code> of ${h(l.customer_email)}?`,
          consequence: a.consequence,
          button: `${a.verb} licence`,
          danger: a.danger,
          back: `/dashboard/licenses/${l.key}`,
        }),
        s,
        '/dashboard/licenses',
      );
    r.get(
      `/licenses/:key/${action}`,
      signedIn(async (req, res, s) =>
        page(res, 200, confirm(s, await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) }))),
      ),
    );
    r.post(
      `/licenses/:key/${action}`,
      signedIn(async (req, res, s) => {
        const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
        if (field(req, 'confirm', 3) !== 'yes') return page(res, 200, confirm(s, license));
        try {
          await clients.licenses.transitionLicense({ account_id: s.accountId, key: license.key, action });
          await showDetail(req, res, s, 200, { notice: `${a.done}. ${a.consequence}` });
        } catch (err) {
          // Not allowed in this status (409): said on the licence's page, nothing changed.
          const e = formErrorsOf(err);
          await showDetail(req, res, s, e.status, { error: e.form ?? Object.values(e.fields)[0] });
        }
      }),
    );
  }

  const deactivateConfirm = (s: DashboardSession, l: License, act: Activation) =>
    layout(
      'Deactivate machine?',
      confirmForm(s, {
        action: `/dashboard/licenses/${l.key}/activations/${act.id}/deactivate`,
        question: `Deactivate <code>${h(act.fingerprint)}</code>${act.name ? ` (${h(act.name)})` : ''}?`,
        consequence: 'The machine frees its slot; it must activate again to validate where activation is required.',
        button: 'Deactivate machine',
        danger: true,
        back: `/dashboard/licenses/${l.key}`,
      }),
      s,
      '/dashboard/licenses',
    );

  /** The licence and one of its activations, both of the signed-in account, or not found. */
  async function ownActivation(req: Request, s: DashboardSession): Promise<[License, Activation]> {
    const id = idOrNotFound('act', String(req.params.id).slice(0, 64), 'activation');
    const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
    // A licence has few machines (max_activations); one page of 100 covers any sensible policy.
    const all = await clients.licenses.listActivations({
      account_id: s.accountId,
      key: license.key,
      page: { limit: 100, starting_after: '' },
    });
    const act = all.data.find((x) => x.id === id);
    if (!act) throw AppError.notFound('activation');
    return [license, act];
  }

  r.get(
    '/licenses/:key/activations/:id/deactivate',
    signedIn(async (req, res, s) => {
      const [license, act] = await ownActivation(req, s);
      page(res, 200, deactivateConfirm(s, license, act));
    }),
  );

  r.post(
    '/licenses/:key/activations/:id/deactivate',
    signedIn(async (req, res, s) => {
      const id = idOrNotFound('act', String(req.params.id).slice(0, 64), 'activation');
      const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
      if (field(req, 'confirm', 3) !== 'yes') {
        const [, act] = await ownActivation(req, s);
        return page(res, 200, deactivateConfirm(s, license, act));
      }
      // The service looks the activation up within this licence of this account.
      const act = await clients.licenses.deactivate({
        account_id: s.accountId,
        key: license.key,
        activation_id: id,
        key_scope: 'full', // the vendor, signed in: not counted against the customer's allowance
        fingerprint: '',
      });
      await showDetail(req, res, s, 200, { notice: `Deactivated ${act.fingerprint}.` });
    }),
  );

  // The licence's extra entitlements, replaced whole as PATCH /api/v1/licenses/{key} {entitlements} does.
  r.post(
    '/licenses/:key/entitlements',
    signedIn(async (req, res, s) => {
      const typed = field(req, 'entitlements', ENTITLEMENTS_TEXT_MAX);
      const codes = entitlementsFromText(typed);
      const problem = entitlementsProblem('entitlements', codes);
      if (problem)
        return showDetail(req, res, s, 400, {
          extras: typed,
          entitlementErrors: { fields: { entitlements: problem.message } },
        });
      try {
        await clients.licenses.updateLicense({
          account_id: s.accountId,
          key: keyOf(req),
          metadata: {},
          set_entitlements: true,
          entitlements: codes,
        });
        await showDetail(req, res, s, 200, { notice: 'Entitlements saved.' });
      } catch (err) {
        // An item's error (entitlements[2]) is shown next to the one field.
        const e = formErrorsOf(err, (f) => f.replace(/\[\d+\]$/, ''));
        await showDetail(req, res, s, e.status, { extras: typed, entitlementErrors: e });
      }
    }),
  );

  // Queued in the notification service, as POST /api/v1/licenses/{key}/email does.
  r.post(
    '/licenses/:key/email',
    signedIn(async (req, res, s) => {
      const mail = await clients.notifications.sendLicenseEmail({
        account_id: s.accountId,
        key: keyOf(req),
        dedupe_key: '',
      });
      await showDetail(req, res, s, 202, { notice: `The e-mail to ${mail.to} is queued.` });
    }),
  );

  r.post(
    '/licenses/:key/file',
    signedIn(async (req, res, s) => {
      const form = { fingerprint: field(req, 'fingerprint', 201).trim(), ttl_days: field(req, 'ttl_days', 12) };
      const errors: Record<string, string> = {};
      const ttl = wholeNumber(form.ttl_days, 'ttl_days', errors);
      if (Object.keys(errors).length)
        return showDetail(req, res, s, 400, { file: form, fileErrors: { fields: errors } });
      try {
        const file = await clients.licenses.issueLicenseFile({
          account_id: s.accountId,
          key: keyOf(req),
          fingerprint: form.fingerprint,
          ttl_days: ttl ?? 0,
          key_scope: 'full', // the vendor, signed in
        });
        const body = JSON.stringify(
          { kid: file.kid, algorithm: file.algorithm, payload: file.payload, signature: file.signature },
          null,
          2,
        );
        res
          .status(200)
          .type('application/json')
          .attachment(`licence-${keyOf(req).slice(0, 11)}.json`)
          .send(body);
      } catch (err) {
        const e = formErrorsOf(err);
        await showDetail(req, res, s, e.status, { file: form, fileErrors: e });
      }
    }),
  );
}
