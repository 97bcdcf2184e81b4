import { html, joinHtml, nothing, type Html } from './template';

// The HTML pieces every server-rendered surface (the dashboard, the customer portal) shares: no
// build step, no client framework, fast on any device. They are written with html`…` (template.ts),
// which escapes every interpolated value that is not Html already.

/** One whole page: the head every surface needs (viewport, its own stylesheet and script), a header and <main>. */
export function htmlDocument(opts: {
  /** The page title, plain text. */
  title: string;
  /** Who the page belongs to, after the title in the tab ("Licensing", a vendor's name). */
  site: string;
  /** Where the surface serves its app.css and app.js (`/dashboard/assets`). */
  assets: string;
  /** The header's contents. */
  header: Html;
  /** The body of <main> after its <h1>. */
  body: Html;
  /** A <footer> after <main> (none when absent). */
  footer?: Html;
}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · ${opts.site}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${opts.assets}/app.css">
<script src="${opts.assets}/app.js" defer></script>
</head>
<body>
<header>${opts.header}</header>
<main id="main">
<h1>${opts.title}</h1>
${opts.body}
</main>${opts.footer ? html`\n<footer>${opts.footer}</footer>` : nothing}
</body>
</html>`;
}

/** A form's error message, or nothing. */
export const errorBox = (message?: string): Html =>
  message ? html`<p class="error" role="alert">${message}</p>` : nothing;

/** A success message, announced politely. */
export const notice = (text?: string): Html => (text ? html`<p class="notice" role="status">${text}</p>` : nothing);

export const date = (iso: string): Html =>
  iso ? html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>` : html`—`;

export const badge = (status: string): Html => html`<span class="badge ${status}">${status}</span>`;

/** What to show when a list is empty: what it will hold and what to do next (text, or Html with a link). */
export const empty = (text: Html | string): Html => html`<p class="empty muted">${text}</p>`;

/** A table that scrolls sideways on a narrow screen instead of widening the page. */
export function table(headers: readonly (Html | string)[], rows: readonly Html[]): Html {
  return html`<div class="scroll"><table><thead><tr>${headers.map((x) => html`<th scope="col">${x}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

/**
 * Cursor pagination (lists are newest first): "Next page" continues after
 * the last item shown; "First page" goes back to the start.
 */
export function pager(path: string, params: Record<string, string>, startingAfter: string, next: string): Html {
  const qs = (extra: Record<string, string>) => {
    const p = new URLSearchParams(Object.entries({ ...params, ...extra }).filter(([, v]) => v));
    const s = p.toString();
    return s ? `${path}?${s}` : path;
  };
  const links = [
    startingAfter ? html`<a href="${qs({})}">First page</a>` : undefined,
    next ? html`<a href="${qs({ starting_after: next })}" rel="next">Next page</a>` : undefined,
  ].filter((x): x is Html => x !== undefined);
  return links.length ? html`<nav class="pager" aria-label="Pages">${joinHtml(links, ' ')}</nav>` : nothing;
}

/** A secret or key shown with a copy button (the surface's script copies it). */
export const copyable = (id: string, value: string): Html =>
  html`<p class="copy-row"><code id="${id}" data-testid="${id}">${value}</code> <button type="button" data-copy="${id}">Copy</button></p>`;

/** The hidden CSRF field of a form. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}">`;
