import { h } from './pages';
import type { FormErrors } from './context';
import type { DashboardSession } from './session';

// Small pieces of HTML every dashboard area shares: fields with their error
// next to them, pagination, empty states, confirmations. Values go through h().

export const date = (iso: string) =>
  iso ? `<time datetime="${h(iso)}">${h(iso.slice(0, 16).replace('T', ' '))} UTC</time>` : '—';

export const badge = (status: string) => `<span class="badge ${h(status)}">${h(status)}</span>`;

/** Minor units as an amount: 1999 USD → "19.99 USD". */
export const money = (amount: number, currency: string) => `${(amount / 100).toFixed(2)} ${h(currency)}`;

export const csrfInput = (s: DashboardSession) => `<input type="hidden" name="_csrf" value="${h(s.csrfToken)}">`;

/** The form-wide message (not tied to one field), if any. */
export const formError = (e?: FormErrors) => (e?.form ? `<p class="error" role="alert">${h(e.form)}</p>` : '');

/** Every message at the top, for when the form itself is not shown (nothing left to choose in it). */
export const allErrors = (e?: FormErrors) => {
  const messages = [e?.form, ...Object.values(e?.fields ?? {})].filter(Boolean);
  return messages.length ? `<p class="error" role="alert">${messages.map((m) => h(m)).join(' ')}</p>` : '';
};

export const notice = (text?: string) => (text ? `<p class="notice" role="status">${h(text)}</p>` : '');

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

/**
 * Cursor pagination (lists are newest first): "Next page" continues after
 * the last item shown; "First page" goes back to the start.
 */
export function pager(path: string, params: Record<string, string>, startingAfter: string, next: string): string {
  const qs = (extra: Record<string, string>) => {
    const p = new URLSearchParams(Object.entries({ ...params, ...extra }).filter(([, v]) => v));
    const s = p.toString();
    return s ? `${path}?${s}` : path;
  };
  const links = [
    startingAfter ? `<a href="${h(qs({}))}">First page</a>` : '',
    next ? `<a href="${h(qs({ starting_after: next }))}" rel="next">Next page</a>` : '',
  ].filter(Boolean);
  return links.length ? `<nav class="pager" aria-label="Pages">${links.join(' ')}</nav>` : '';
}

/** What to show when a list is empty: what it will hold and what to do next. */
export const empty = (text: string) => `<p class="empty muted">${text}</p>`;

/** A table that scrolls sideways on a narrow screen instead of widening the page. */
export function table(headers: string[], rows: string[]): string {
  return `<div class="scroll"><table><thead><tr>${headers.map((x) => `<th scope="col">${x}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

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

/** A secret or key shown with a copy button (the dashboard's one script copies it). */
export const copyable = (id: string, value: string) =>
  `<p class="copy-row"><code id="${h(id)}" data-testid="${h(id)}">${h(value)}</code> <button type="button" data-copy="${h(id)}">Copy</button></p>`;
