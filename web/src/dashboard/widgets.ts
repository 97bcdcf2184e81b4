import { badge, copyable, csrfField, date, empty, notice, pager, table } from '../kit/html';
import { html, joinHtml, nothing, type Html } from '../kit/template';
import type { FormErrors } from './context';
import type { DashboardSession } from './session';

// Small pieces of HTML every dashboard area shares: fields with their error
// next to them, confirmations; and the shared ones of pages/html.ts (dates,
// badges, tables, pagination). Written with html`…`, which escapes every value.
export { badge, copyable, date, empty, notice, pager, table };

/** Minor units as an amount: 1999 USD → "19.99 USD". */
export const money = (amount: number, currency: string): string => `${(amount / 100).toFixed(2)} ${currency}`;

export const csrfInput = (s: DashboardSession): Html => csrfField(s.csrfToken);

/** The form-wide message (not tied to one field), if any. */
export const formError = (e?: FormErrors): Html =>
  e?.form ? html`<p class="error" role="alert">${e.form}</p>` : nothing;

/** Every message at the top, for when the form itself is not shown (nothing left to choose in it). */
export const allErrors = (e?: FormErrors): Html => {
  const messages = [e?.form, ...Object.values(e?.fields ?? {})].filter(Boolean);
  return messages.length
    ? html`<p class="error" role="alert">${joinHtml(
        messages.map((m) => html`${m}`),
        ' ',
      )}</p>`
    : nothing;
};

interface FieldOpts {
  name: string;
  label: string;
  value?: string;
  type?: string;
  hint?: string;
  errors?: FormErrors;
  /** Extra attributes (required, maxlength, inputmode, …). */
  attrs?: Html;
}

/** A labelled input; its error (if any) right below it, announced and tied to it with aria-describedby. */
export function input({ name, label, value = '', type = 'text', hint, errors, attrs = nothing }: FieldOpts): Html {
  const error = errors?.fields[name];
  const describedBy = error ? html` aria-invalid="true" aria-describedby="${name}-error"` : nothing;
  return html`<div class="field"><label for="${name}">${label}${hint ? html` <small>${hint}</small>` : nothing}</label>
<input id="${name}" name="${name}" type="${type}" value="${value}"${describedBy} ${attrs}>${fieldError(name, error)}</div>`;
}

/** A labelled text area (several lines), as input() is for one. */
export function textarea({ name, label, value = '', hint, errors, attrs = nothing }: Omit<FieldOpts, 'type'>): Html {
  const error = errors?.fields[name];
  const describedBy = error ? html` aria-invalid="true" aria-describedby="${name}-error"` : nothing;
  return html`<div class="field"><label for="${name}">${label}${hint ? html` <small>${hint}</small>` : nothing}</label>
<textarea id="${name}" name="${name}" rows="3"${describedBy} ${attrs}>${value}</textarea>${fieldError(name, error)}</div>`;
}

export function select({
  name,
  label,
  options,
  value = '',
  errors,
}: {
  name: string;
  label: string;
  options: [string, string][];
  value?: string;
  errors?: FormErrors;
}): Html {
  const error = errors?.fields[name];
  const describedBy = error ? html` aria-invalid="true" aria-describedby="${name}-error"` : nothing;
  const opts = options.map(([v, text]) => html`<option value="${v}"${v === value ? ' selected' : ''}>${text}</option>`);
  return html`<div class="field"><label for="${name}">${label}</label><select id="${name}" name="${name}"${describedBy}>${opts}</select>${fieldError(name, error)}</div>`;
}

export function checkbox({
  name,
  label,
  checked,
  value = 'yes',
  id = name,
}: {
  name: string;
  label: string;
  checked: boolean;
  value?: string;
  id?: string;
}): Html {
  return html`<div class="check"><input type="checkbox" id="${id}" name="${name}" value="${value}"${checked ? ' checked' : ''}> <label for="${id}">${label}</label></div>`;
}

export const fieldError = (name: string, error?: string): Html =>
  error ? html`<p class="field-error" id="${name}-error">${error}</p>` : nothing;

/** A button that posts (with the CSRF token) to `action`. */
export const postButton = (s: DashboardSession, action: string, label: string, cls = ''): Html =>
  html`<form method="post" action="${action}" class="button-form">${csrfInput(s)}<button type="submit"${cls ? html` class="${cls}"` : nothing}>${label}</button></form>`;

/** The body of a confirmation page: what will happen, one button to do it, one link back. */
export function confirmForm(
  s: DashboardSession,
  opts: {
    action: string;
    question: Html | string;
    consequence: string;
    button: string;
    danger?: boolean;
    back: string;
  },
): Html {
  return html`<form method="post" action="${opts.action}" class="card narrow">
  ${csrfInput(s)}
  <input type="hidden" name="confirm" value="yes">
  <p>${opts.question} ${opts.consequence}</p>
  <button type="submit"${opts.danger ? html` class="danger"` : nothing}>${opts.button}</button>
  <a href="${opts.back}">Cancel</a>
</form>`;
}
