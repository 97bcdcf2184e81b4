// The HTML pieces every server-rendered surface (the dashboard, the customer portal) shares: no
// build step, no client framework, fast on any device. Every interpolated value goes through h().

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const h = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** One whole page: the head every surface needs (viewport, its own stylesheet and script), a header and <main>. */
export function htmlDocument(opts: {
  /** The page title, already plain text (escaped here). */
  title: string;
  /** Who the page belongs to, after the title in the tab ("Licensing", a vendor's name). */
  site: string;
  /** Where the surface serves its app.css and app.js (`/dashboard/assets`). */
  assets: string;
  /** The header's contents, already HTML. */
  header: string;
  /** The body of <main> after its <h1>, already HTML. */
  body: string;
  /** A <footer> after <main>, already HTML (none when absent). */
  footer?: string;
}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(opts.title)} · ${h(opts.site)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${h(opts.assets)}/app.css">
<script src="${h(opts.assets)}/app.js" defer></script>
</head>
<body>
<header>${opts.header}</header>
<main id="main">
<h1>${h(opts.title)}</h1>
${opts.body}
</main>${opts.footer ? `\n<footer>${opts.footer}</footer>` : ''}
</body>
</html>`;
}

/** A form's error message, or nothing. */
export const errorBox = (message?: string) => (message ? `<p class="error" role="alert">${h(message)}</p>` : '');

/** A success message, announced politely. */
export const notice = (text?: string) => (text ? `<p class="notice" role="status">${h(text)}</p>` : '');

export const date = (iso: string) =>
  iso ? `<time datetime="${h(iso)}">${h(iso.slice(0, 16).replace('T', ' '))} UTC</time>` : '—';

export const badge = (status: string) => `<span class="badge ${h(status)}">${h(status)}</span>`;

/** What to show when a list is empty: what it will hold and what to do next. */
export const empty = (text: string) => `<p class="empty muted">${text}</p>`;

/** A table that scrolls sideways on a narrow screen instead of widening the page. */
export function table(headers: string[], rows: string[]): string {
  return `<div class="scroll"><table><thead><tr>${headers.map((x) => `<th scope="col">${x}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

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

/** A secret or key shown with a copy button (the surface's script copies it). */
export const copyable = (id: string, value: string) =>
  `<p class="copy-row"><code id="${h(id)}" data-testid="${h(id)}">${h(value)}</code> <button type="button" data-copy="${h(id)}">Copy</button></p>`;

/** The hidden CSRF field of a form. */
export const csrfField = (token: string) => `<input type="hidden" name="_csrf" value="${h(token)}">`;
