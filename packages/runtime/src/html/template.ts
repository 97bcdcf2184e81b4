import { html as honoHtml, raw as honoRaw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

// The one way this project writes HTML (pages, the /docs reference, the HTML part of mails): html`…`
// (hono's tagged template), where an interpolated value is escaped (&, <, >, ", ') unless it is
// itself Html (made by html`…` or trustedHtml()), so a value reaches the markup unescaped only where
// the code says so. Arrays are joined (rows.map(...) needs no .join('')); false, null and undefined
// render nothing, so `${cond && html`…`}` reads as it should. test/repository/html-escaping.test.ts
// holds every component to it: no escape function of its own, no other import of hono's templates.

/** Markup that is safe to put on a page as it is. */
export type Html = HtmlEscapedString;

/** An escaping template: `html\`<p>${name}</p>\`` escapes `name` unless it is Html already. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const out = honoHtml(strings, ...values);
  // Markup is rendered synchronously from data fetched before: a Promise here is a bug (a missing await).
  if (out instanceof Promise) throw new TypeError('a page template was given a Promise: await the value first');
  return out;
}

/**
 * Text that is HTML already and is put on the page as it is: markup built by this project's own
 * code (an inline SVG, a stylesheet), never a value a user or a vendor could have typed.
 */
export const trustedHtml = (markup: string): Html => honoRaw(markup);

/** Nothing, as Html (the empty branch of a choice). */
export const nothing: Html = honoRaw('');

/** Joins pieces of Html with a separator (escaped unless it is Html too). */
export const joinHtml = (pieces: readonly Html[], separator: Html | string = ''): Html =>
  pieces.length === 0 ? nothing : html`${pieces.flatMap((p, i) => (i === 0 ? [p] : [separator, p]))}`;
