import type { Request, Response, Router } from 'express';
import { isId } from '@licensing/runtime';
import { webhookEventTypes, type WebhookDelivery, type WebhookEndpoint } from '@licensing/proto';
import {
  field,
  fieldList,
  formErrorsOf,
  idOrNotFound,
  queryOf,
  type DashboardContext,
  type FormErrors,
} from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import {
  badge,
  checkbox,
  confirmForm,
  copyable,
  csrfInput,
  date,
  empty,
  formError,
  input,
  notice,
  pager,
  postButton,
  table,
} from './widgets';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { html, type Html } from '../kit/template';

// /dashboard/webhooks: endpoints (add with event types, enable or disable,
// rotate the secret, send a test event) and each one's delivery log with a
// retry button. All through the webhook service, scoped to the account.

const PAGE = 25;
/** Delivery ids are dlv_<event>_<endpoint>: only the shape is checked here, the service finds it within the endpoint. */
const DELIVERY_ID = /^dlv_[0-9A-Z_]{1,80}$/;

interface EndpointForm {
  url: string;
  description: string;
  events: string[];
}

const enabledBadge = (e: WebhookEndpoint) => (e.enabled ? badge('enabled') : badge('disabled'));
const eventsText = (e: WebhookEndpoint) => (e.events.includes('*') ? 'all events' : e.events.join(', '));

function eventsFieldset(form: EndpointForm, errors?: FormErrors): Html {
  const error = errors?.fields.events;
  const boxes = ['*', ...webhookEventTypes].map((t, i) =>
    checkbox({
      name: 'events',
      id: `event-${i}`,
      value: t,
      label: t === '*' ? 'All events' : t,
      checked: form.events.includes(t),
    }),
  );
  return html`<fieldset class="wide"${error ? html` aria-describedby="events-error"` : ''}><legend>Event types</legend><div class="events">${boxes}</div>${error ? html`<p class="field-error" id="events-error">${error}</p>` : ''}</fieldset>`;
}

function listPage(
  s: DashboardSession,
  d: { endpoints: WebhookEndpoint[]; after: string; next: string; form: EndpointForm; errors?: FormErrors },
): Html {
  const rows = d.endpoints.map(
    (e) =>
      html`<tr data-endpoint-id="${e.id}"><td><a href="/dashboard/webhooks/${e.id}"><code>${e.url}</code></a></td><td>${e.description}</td><td>${eventsText(e)}</td><td>${enabledBadge(e)}</td><td>${date(e.created_at)}</td></tr>`,
  );
  return layout(
    'Webhooks',
    html`${d.endpoints.length ? html`${table(['URL', 'Description', 'Events', 'Status', 'Created'], rows)}${pager('/dashboard/webhooks', {}, d.after, d.next)}` : empty(d.after ? html`No more endpoints. <a href="/dashboard/webhooks">First page</a>.` : 'No webhook endpoints yet. Add one below and your server hears about new licences, renewals and payments as they happen.')}
<section class="card" aria-labelledby="new-endpoint-title">
  <h2 id="new-endpoint-title">Add an endpoint</h2>
  ${formError(d.errors)}
  <form method="post" action="/dashboard/webhooks" novalidate>
    ${csrfInput(s)}
    <div class="form-grid">
      ${input({ name: 'url', label: 'URL', type: 'url', value: d.form.url, errors: d.errors, hint: '(https, reachable from the internet)', attrs: html`required maxlength="2048" placeholder="https://example.com/webhooks/licensing"` })}
      ${input({ name: 'description', label: 'Description', value: d.form.description, errors: d.errors, hint: '(optional)', attrs: html`maxlength="500"` })}
      ${eventsFieldset(d.form, d.errors)}
    </div>
    <p><button type="submit">Add endpoint</button></p>
  </form>
</section>`,
    s,
    '/dashboard/webhooks',
  );
}

function detailPage(
  s: DashboardSession,
  d: {
    endpoint: WebhookEndpoint;
    deliveries: WebhookDelivery[];
    after: string;
    next: string;
    secret?: string;
    notice?: string;
    error?: string;
  },
): Html {
  const e = d.endpoint;
  const base = `/dashboard/webhooks/${e.id}`;
  const secret = d.secret
    ? html`<section class="card secret" role="status" aria-labelledby="secret-title">
  <h2 id="secret-title">Signing secret</h2>
  <p><strong>Copy it now: you will not see this again.</strong> Your server checks each delivery’s signature with it.</p>
  ${copyable('webhook-secret', d.secret)}
</section>`
    : '';
  const rows = d.deliveries.map(
    (x) =>
      html`<tr data-delivery-id="${x.id}"><td>${x.event_type}<br><code class="muted">${x.event_id}</code></td><td>${badge(x.status)}</td><td>${x.attempts}</td><td>${x.last_status_code || '—'}${x.last_error ? html`<br><small>${x.last_error}</small>` : ''}</td><td>${date(x.created_at)}</td><td>${x.status === 'delivered' ? date(x.delivered_at) : x.next_attempt_at ? html`next ${date(x.next_attempt_at)}` : '—'}</td><td>${x.status !== 'delivered' && e.enabled ? postButton(s, `${base}/deliveries/${x.id}/retry`, 'Retry') : ''}</td></tr>`,
  );
  return layout(
    'Webhook endpoint',
    html`${notice(d.notice)}${d.error ? html`<p class="error" role="alert">${d.error}</p>` : ''}${secret}
<section class="card" aria-labelledby="endpoint-title">
  <h2 id="endpoint-title" class="sr-only">Endpoint</h2>
  <dl class="facts">
    <dt>URL</dt><dd><code>${e.url}</code></dd>
    <dt>Status</dt><dd data-testid="endpoint-status">${enabledBadge(e)}</dd>
    <dt>Events</dt><dd>${eventsText(e)}</dd>
    ${e.description ? html`<dt>Description</dt><dd>${e.description}</dd>` : ''}
    <dt>Created</dt><dd>${date(e.created_at)}</dd>
  </dl>
  <div class="button-row">
    ${e.enabled ? postButton(s, `${base}/disable`, 'Disable', 'danger') : postButton(s, `${base}/enable`, 'Enable')}
    ${e.enabled ? postButton(s, `${base}/test`, 'Send test event') : ''}
    <a href="${base}/rotate-secret">Rotate secret</a>
  </div>
</section>
<section aria-labelledby="deliveries-title">
  <h2 id="deliveries-title">Deliveries</h2>
  ${d.deliveries.length ? html`${table(['Event', 'Status', 'Attempts', 'Response', 'Created', 'Delivered / next try', html`<span class="sr-only">Actions</span>`], rows)}${pager(base, {}, d.after, d.next)}` : empty(d.after ? html`No more deliveries. <a href="${base}">First page</a>.` : 'Nothing delivered yet. Send a test event to check that your server answers 2xx.')}
</section>`,
    s,
    '/dashboard/webhooks',
  );
}

const blank: EndpointForm = { url: '', description: '', events: ['*'] };

async function showList(
  { clients, page }: DashboardContext,
  req: Request,
  res: Response,
  s: DashboardSession,
  status: number,
  form = blank,
  errors?: FormErrors,
) {
  const after = isId('we', queryOf(req, 'starting_after', 64)) ? queryOf(req, 'starting_after', 64) : '';
  const out = await clients.webhooks.listEndpoints({
    account_id: s.accountId,
    page: { limit: PAGE, starting_after: after },
  });
  const next = out.page!.has_more ? out.page!.next_cursor : '';
  page(res, status, listPage(s, { endpoints: out.data, after, next, form, errors }));
}

const idOf = (req: Request) => idOrNotFound('we', String(req.params.id).slice(0, 64), 'webhook endpoint');

async function showDetail(
  { clients, page }: DashboardContext,
  req: Request,
  res: Response,
  s: DashboardSession,
  id: string,
  status: number,
  extra: { secret?: string; notice?: string; error?: string } = {},
) {
  const raw = queryOf(req, 'starting_after', 100);
  const after = DELIVERY_ID.test(raw) ? raw : '';
  const [endpoint, deliveries] = await Promise.all([
    clients.webhooks.getEndpoint({ account_id: s.accountId, id }),
    clients.webhooks.listDeliveries({
      account_id: s.accountId,
      endpoint_id: id,
      page: { limit: PAGE, starting_after: after },
    }),
  ]);
  const next = deliveries.page!.has_more ? deliveries.page!.next_cursor : '';
  page(res, status, detailPage(s, { endpoint, deliveries: deliveries.data, after, next, ...extra }));
}

const listEndpoints = (ctx: DashboardContext) => ctx.signedIn((req, res, s) => showList(ctx, req, res, s, 200));

const addEndpoint = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const form = {
      url: field(req, 'url', 2049).trim(),
      description: field(req, 'description', 501).trim(),
      events: fieldList(req, 'events', webhookEventTypes.length + 1, 64),
    };
    const errors: Record<string, string> = {};
    if (!form.url) errors.url = 'Enter the URL your server receives webhooks at.';
    if (!form.events.length) errors.events = 'Choose at least one event type, or All events.';
    if (Object.keys(errors).length) return showList(ctx, req, res, s, 400, form, { fields: errors });
    try {
      const out = await ctx.clients.webhooks.createEndpoint({
        account_id: s.accountId,
        url: form.url,
        events: form.events,
        description: form.description,
      });
      await showDetail(ctx, req, res, s, out.endpoint!.id, 201, { secret: out.secret, notice: 'Endpoint added.' });
    } catch (err) {
      const e = formErrorsOf(err);
      await showList(ctx, req, res, s, e.status, form, e);
    }
  });

const showEndpoint = (ctx: DashboardContext) =>
  ctx.signedIn((req, res, s) => showDetail(ctx, req, res, s, idOf(req), 200));

const setEnabled = (enabled: boolean) => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOf(req);
    await ctx.clients.webhooks.updateEndpoint({ account_id: s.accountId, id, events: [], enabled });
    await showDetail(ctx, req, res, s, id, 200, {
      notice: enabled
        ? 'Enabled: new events are delivered again.'
        : 'Disabled: no events are delivered until you enable it.',
    });
  });

const sendTestEvent = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOf(req);
    try {
      const d = await ctx.clients.webhooks.sendTestEvent({ account_id: s.accountId, id });
      await showDetail(ctx, req, res, s, id, 202, {
        notice: `Test event queued (${d.event_id}). Its delivery appears below.`,
      });
    } catch (err) {
      const e = formErrorsOf(err);
      await showDetail(ctx, req, res, s, id, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

const retryDelivery = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOf(req);
    const deliveryId = String(req.params.delivery).slice(0, 100);
    if (!DELIVERY_ID.test(deliveryId))
      return showDetail(ctx, req, res, s, id, 404, { error: 'There is no such delivery.' });
    try {
      await ctx.clients.webhooks.retryDelivery({ account_id: s.accountId, endpoint_id: id, delivery_id: deliveryId });
      await showDetail(ctx, req, res, s, id, 200, { notice: 'Sending it again now.' });
    } catch (err) {
      const e = formErrorsOf(err);
      await showDetail(ctx, req, res, s, id, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

const rotateConfirm = (s: DashboardSession, e: WebhookEndpoint): Html =>
  layout(
    'Rotate signing secret?',
    confirmForm(s, {
      action: `/dashboard/webhooks/${e.id}/rotate-secret`,
      question: html`Make a new signing secret for <code>${e.url}</code>?`,
      consequence:
        'The new secret is shown once. The previous one keeps signing alongside it for 24 hours, so you can update your server in the meantime; a secret older than that one stops signing now.',
      button: 'Rotate secret',
      back: `/dashboard/webhooks/${e.id}`,
    }),
    s,
    '/dashboard/webhooks',
  );

const confirmRotate = ({ clients, page, signedIn }: DashboardContext) =>
  signedIn(async (req, res, s) =>
    page(res, 200, rotateConfirm(s, await clients.webhooks.getEndpoint({ account_id: s.accountId, id: idOf(req) }))),
  );

const rotateSecret = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOf(req);
    const { clients, page } = ctx;
    if (field(req, 'confirm', 3) !== 'yes')
      return page(res, 200, rotateConfirm(s, await clients.webhooks.getEndpoint({ account_id: s.accountId, id })));
    const out = await clients.webhooks.rotateSecret({ account_id: s.accountId, id });
    await showDetail(ctx, req, res, s, id, 201, { secret: out.secret, notice: 'New secret made.' });
  });

const WEBHOOK_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/webhooks', handler: listEndpoints },
  { method: 'post', path: '/webhooks', handler: addEndpoint },
  { method: 'get', path: '/webhooks/:id', handler: showEndpoint },
  { method: 'post', path: '/webhooks/:id/enable', handler: setEnabled(true) },
  { method: 'post', path: '/webhooks/:id/disable', handler: setEnabled(false) },
  { method: 'post', path: '/webhooks/:id/test', handler: sendTestEvent },
  { method: 'post', path: '/webhooks/:id/deliveries/:delivery/retry', handler: retryDelivery },
  { method: 'get', path: '/webhooks/:id/rotate-secret', handler: confirmRotate },
  { method: 'post', path: '/webhooks/:id/rotate-secret', handler: rotateSecret },
];

export function webhookPages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, WEBHOOK_ROUTES, ctx);
}
