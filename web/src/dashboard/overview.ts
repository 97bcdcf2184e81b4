import type { Router } from 'express';
import type { License, Stats, ValidationCode } from '@licensing/proto';
import type { DashboardContext } from './context';
import { layout, type Limits } from './pages';
import type { DashboardSession } from './session';
import { badge, date, empty, table } from './widgets';
import { html, type Html } from '../kit/template';

// The overview: requests against the plan's hourly limit, and validations by
// answer code over 24 hours and 30 days. Charts are SVG drawn here (no script,
// no inline style: the CSP allows neither), each with a text equivalent.

/**
 * Answer codes in a fixed order and colour, so the charts read the same every day. Every code has its
 * own (a code added to proto/rules does not compile without one).
 */
const CODE_LOOKS: Record<ValidationCode, [colour: string, label: string]> = {
  valid: ['#067647', 'valid'],
  expired_in_grace: ['#66c61c', 'expired, in grace'],
  not_activated: ['#7a5af8', 'machine not activated'],
  lease_expired: ['#9e77ed', 'floating seat lapsed'],
  activation_limit_reached: ['#2457d6', 'activation limit reached'],
  entitlements_missing: ['#0e9384', 'entitlement missing'],
  expired: ['#dc6803', 'expired'],
  suspended: ['#f79009', 'suspended'],
  subscription_unpaid: ['#e04f16', 'subscription unpaid'],
  revoked: ['#b42318', 'revoked'],
  product_mismatch: ['#c11574', 'other product'],
  not_found: ['#98a2b3', 'key not found'],
};
const CODES = Object.entries(CODE_LOOKS).map(([code, [colour, label]]) => [code, colour, label] as const);
const OTHER_COLOUR = '#475467';
const colourOf = (code: string) => CODES.find(([c]) => c === code)?.[1] ?? OTHER_COLOUR;
const labelOf = (code: string) => CODES.find(([c]) => c === code)?.[2] ?? code;

interface Bar {
  /** Label of the slot for people ("14:00 UTC", "3 Jun"). */
  label: string;
  total: number;
  byCode: Record<string, number>;
}

/** Codes in display order; counts stored before codes were recorded show as "other". */
function stack(bar: Bar): [string, number][] {
  const known = CODES.map(([c]): [string, number] => [c, bar.byCode[c] ?? 0]);
  const unknown = Object.entries(bar.byCode).filter(([c]) => !CODES.some(([k]) => k === c));
  const counted = [...known, ...unknown].reduce((n, [, v]) => n + v, 0);
  const rest: [string, number] = ['other', Math.max(0, bar.total - counted)];
  return [...known, ...unknown, rest].filter(([, v]) => v > 0);
}

function totals(bars: Bar[]): [string, number][] {
  const sum: Record<string, number> = {};
  for (const b of bars) for (const [c, n] of stack(b)) sum[c] = (sum[c] ?? 0) + n;
  return Object.entries(sum).sort(([a], [b]) => order(a) - order(b));
}
const order = (code: string) => {
  const i = CODES.findIndex(([c]) => c === code);
  return i < 0 ? CODES.length : i;
};

const swatch = (colour: string) =>
  html`<svg class="swatch" viewBox="0 0 10 10" aria-hidden="true" focusable="false"><rect width="10" height="10" fill="${colour}"></rect></svg>`;

/** A stacked bar chart by answer code, with a legend that is also its text: totals per code. */
export function codesChart(id: string, title: string, period: string, bars: Bar[], emptyText: string): Html {
  const W = 480;
  const H = 120;
  const max = Math.max(1, ...bars.map((b) => b.total));
  const bw = W / bars.length;
  const total = bars.reduce((n, b) => n + b.total, 0);
  const sums = totals(bars);
  const svgBars = bars.map((b, i) => {
    let y = H;
    const rects = stack(b).map(([code, n]) => {
      const bh = (n / max) * (H - 10);
      y -= bh;
      return html`<rect x="${(i * bw + 1).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${bh.toFixed(1)}" fill="${colourOf(code)}"></rect>`;
    });
    const detail = stack(b)
      .map(([c, n]) => `${n} ${labelOf(c)}`)
      .join(', ');
    return html`<g><title>${`${b.label}: ${b.total} validations${detail ? ` (${detail})` : ''}`}</title>${rects}</g>`;
  });
  const summary = sums.map(([c, n]) => `${n} ${labelOf(c)}`).join(', ');
  const legend = sums.map(
    ([c, n]) =>
      html`<li data-code="${c}">${swatch(colourOf(c))}${labelOf(c)}: <strong>${n.toLocaleString('en')}</strong></li>`,
  );
  return html`<figure class="chart" aria-labelledby="${id}-caption">
  <svg viewBox="0 0 ${W} ${H}" width="100%" height="${H}" role="img" aria-label="${`${title}: ${total} in all${summary ? `, ${summary}` : ''}`}" preserveAspectRatio="none">${svgBars}<line x1="0" y1="${H - 0.5}" x2="${W}" y2="${H - 0.5}" stroke="#b8c0cc"></line></svg>
  <figcaption id="${id}-caption"><span data-testid="${id}">${total}</span> validations ${period}.${total ? ' Hover a bar for its numbers.' : ` ${emptyText}`}</figcaption>
  ${legend.length ? html`<ul class="legend" aria-label="Validations by answer">${legend}</ul>` : ''}
</figure>`;
}

type Usage = { used: number; resetsInS: number };

/** Requests this hour against an hourly budget (the account's quota, or its apps' allowance), as a meter with the numbers beside it. */
function usageMeter(id: string, label: string, limit: number, usage: Usage | undefined, over: string): Html {
  if (!usage)
    return html`<p class="muted">${label}: at most <strong>${limit.toLocaleString('en')}</strong> per hour. Current usage is not available right now.</p>`;
  const used = Math.min(usage.used, limit);
  const share = Math.round((used / limit) * 100);
  return html`<p><label for="${id}-meter">${label}</label>: <strong data-testid="${id}">${usage.used.toLocaleString('en')}</strong> of <strong>${limit.toLocaleString('en')}</strong> (${share}%); the window starts again in ${Math.ceil(usage.resetsInS / 60)} min.</p>
<meter id="${id}-meter" class="meter" min="0" max="${limit}" low="${Math.floor(limit * 0.7)}" high="${Math.floor(limit * 0.9)}" optimum="0" value="${used}">${share}%</meter>${usage.used >= limit ? html`<p class="error">${over}</p>` : ''}`;
}

const hourLabel = (iso: string) => `${iso.slice(11, 16)} UTC`;
const dayLabel = (iso: string) =>
  new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

export function overviewPage(
  s: DashboardSession,
  data: { stats: Stats; licenses: License[]; limits: Limits; usage?: Usage; appUsage?: Usage },
): Html {
  const hours: Bar[] = data.stats.validations_by_hour.map((x) => ({
    label: hourLabel(x.hour),
    total: x.validations,
    byCode: x.by_code,
  }));
  const days: Bar[] = data.stats.validations_by_day.map((x) => ({
    label: dayLabel(x.day),
    total: x.validations,
    byCode: x.by_code,
  }));
  const total24 = hours.reduce((n, x) => n + x.total, 0);
  const valid24 = data.stats.validations_by_hour.reduce((n, x) => n + x.valid, 0);
  const rows = data.licenses.map(
    (l) =>
      html`<tr><td><a href="/dashboard/licenses/${l.key}"><code>${l.key}</code></a></td><td>${l.customer_email}</td><td>${badge(l.status)}</td><td>${date(l.created_at)}</td></tr>`,
  );
  return layout(
    s.accountName,
    html`<section class="stats" aria-label="Numbers">
  <div class="stat"><span class="n" data-testid="licenses-count">${data.stats.licenses_total.toLocaleString('en')}</span> licences issued</div>
  <div class="stat"><span class="n">${total24.toLocaleString('en')}</span> validations in 24 h (${valid24.toLocaleString('en')} valid)</div>
  <div class="stat"><span class="n">${s.plan}</span> plan · ${data.limits.hour.toLocaleString('en')} requests/hour · ${data.limits.appHour.toLocaleString('en')} app requests/hour · ${data.limits.licenseMinute.toLocaleString('en')} requests/minute per licence</div>
</section>
<section class="card" aria-labelledby="usage-title">
  <h2 id="usage-title">API usage</h2>
  ${usageMeter('requests-this-hour', 'Requests this hour (full-scope keys and this dashboard)', data.limits.hour, data.usage, 'The hourly limit is reached: API requests with full-scope keys and dashboard pages get 429 until the window starts again.')}
  ${usageMeter('app-requests-this-hour', 'App requests this hour (validate-scope keys and licence credentials)', data.limits.appHour, data.appUsage, 'The hourly app allowance is reached: requests with validate-scope keys and licence credentials get 429 until the window starts again.')}
</section>
<h2>Validations, last 24 hours</h2>
${codesChart('validations-24h', 'Validations per hour over the last 24 hours', 'in the last 24 hours', hours, 'They appear here as your apps check their keys.')}
<h2>Validations, last 30 days</h2>
${codesChart('validations-30d', 'Validations per day over the last 30 days', 'in the last 30 days', days, 'They appear here as your apps check their keys.')}
<h2>Latest licences</h2>
${data.licenses.length ? table(['Key', 'Customer', 'Status', 'Issued'], rows) : empty(html`No licences yet. <a href="/dashboard/products">Create a product</a>, then <a href="/dashboard/licenses">issue a licence</a> for it.`)}
<p><a href="/dashboard/licenses">All licences</a> · <a href="/dashboard/settings">API keys</a></p>`,
    s,
    '/dashboard',
  );
}

export function overviewPages(r: Router, ctx: DashboardContext, limitsOf: (s: DashboardSession) => Limits): void {
  r.get(
    '/',
    ctx.signedIn(async (_req, res, s) => {
      const [stats, licenses, usage, appUsage] = await Promise.all([
        ctx.clients.licenses.getStats({ account_id: s.accountId }),
        ctx.clients.licenses.listLicenses({
          account_id: s.accountId,
          page: { limit: 10, starting_after: '' },
          product_id: '',
          customer_email: '',
          status: '',
        }),
        ctx.hourlyUsage?.(s.accountId),
        ctx.hourlyUsage?.(s.accountId, true),
      ]);
      ctx.page(res, 200, overviewPage(s, { stats, licenses: licenses.data, limits: limitsOf(s), usage, appUsage }));
    }),
  );
}
