import { badge, copyable, csrfField, date, empty, h, notice, pager, table } from '../kit/html';
import type { FormErrors } from './context';
import type { DashboardSession } from './session';

// Small pieces of HTML every dashboard area shares: fields with their error
// next to them, confirmations; and the shared ones of pages/html.ts (dates,
// badges, tables, pagination). Values go through h().
export { badge, copyable, date, empty, notice, pager, table };

/** Minor units as an amount: 1999 USD → "19.99 USD". */
export const money = (amount: number, currency: string) => `${(amount / 100).toFixed(2)} ${h(currency)}`;

export const csrfInput = (s: DashboardSession) => csrfField(s.csrfToken);

/** The form-wide message (not tied to one field), if any. */
export const formError = (e?: FormErrors) => (e?.form ? `<p class="error" role="alert">${h(e.form)}</p>` : '');

/** Every message at the top, for when the form itself is not shown (nothing left to choose in it). */
export const allErrors = (e?: FormErrors) => {
  const messages = [e?.form, ...Object.values(e?.fields ?? {})].filter(Boolean);
  return messages.length ? `<p class="error" role="alert">${messages.map((m) => h(m)).join(' ')}</p>` : '';
};

interface FieldOpts {
  name: string;
  label: string;
  value?: string;
  type?: string;
  hint?: string;
  errors?: FormErrors;
  /** Extra attributes, already safe (required, maxlength, inputmode, …). */
  attrs?: string;
}

/** A labelled input; its error (if any) right below it, announced and tied to it with aria-describedby. */
export function input({ name, label, value = '', type = 'text', hint, errors, attrs = '' }: FieldOpts): string {
  const error = errors?.fields[name];
  const describedBy = error ? ` aria-invalid="true" aria-describedby="${h(name)}-error"` : '';
  return `<div class="field"><label for="${h(name)}">${h(label)}${hint ? ` <small>${h(hint)}</small>` : ''}</label>
<input id="${h(name)}" name="${h(name)}" type="${type}" value="${h(value)}"${describedBy} ${attrs}>${fieldError(name, error)}</div>`;
}

/** A labelled text area (several lines), as input() is for one. */
export function textarea({ name, label, value = '', hint, errors, attrs = '' }: Omit<FieldOpts, 'type'>): string {
  const error = errors?.fields[name];
  const describedBy = error ? ` aria-invalid="true" aria-describedby="${h(name)}-error"` : '';
  return `<div class="field"><label for="${h(name)}">${h(label)}${hint ? ` <small>${h(hint)}</small>` : ''}</label>
<textarea id="${h(name)}" name="${h(name)}" rows="3"${describedBy} ${attrs}>${h(value)}</textarea>${fieldError(name, error)}</div>`;
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
}): string {
  const error = errors?.fields[name];
  const describedBy = error ? ` aria-invalid="true" aria-describedby="${h(name)}-error"` : '';
  const opts = options
    .map(([v, text]) => `<option value="${h(v)}"${v === value ? ' selected' : ''}>${h(text)}</option>`)
    .join('');
  return `<div class="field"><label for="${h(name)}">${h(label)}</label><select id="${h(name)}" name="${h(name)}"${describedBy}>${opts}</select>${fieldError(name, error)}</div>`;
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
}): string {
  return `<div class="check"><input type="checkbox" id="${h(id)}" name="${h(name)}" value="${h(value)}"${checked ? ' checked' : ''}> <label for="${h(id)}">${h(label)}</label></div>`;
}

export const fieldError = (name: string, error?: string) =>
  error ? `<p class="field-error" id="${h(name)}-error">${h(error)}</p>` : '';

/** A button that posts (with the CSRF token) to `action`. */
export const postButton = (s: DashboardSession, action: string, label: string, cls = '') =>
  `<form method="post" action="${h(action)}" class="button-form">${csrfInput(s)}<button type="submit"${cls ? ` class="${cls}"` : ''}>${h(label)}</button></form>`;

/** The body of a confirmation page: what will happen, one button to do it, one link back. */
export function confirmForm(
  s: DashboardSession,
  opts: { action: string; question: string; consequence: string; button: string; danger?: boolean; back: string },
): string {
  return `<form method="post" action="${h(opts.action)}" class="card narrow">
  ${csrfInput(s)}
  <input type="hidden" name="confirm" value="yes">
  <p>${opts.question} ${h(opts.consequence)}</p>
  <button type="submit"${opts.danger ? ' class="danger"' : ''}>${h(opts.button)}</button>
  <a href="${h(opts.back)}">Cancel</a>
</form>`;
}
