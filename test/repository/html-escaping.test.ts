import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { root } from '../support/repo-paths';

// All the HTML this project writes (the web's pages, the gateway's /docs reference, the HTML part of
// the notification service's mails) goes through one template library: html`…` of
// packages/runtime/src/html/template.ts, which escapes every value that is not already Html, so a value
// reaches the markup unescaped only where the code says so (trustedHtml()). An escape function of a
// file's own is one to forget calling somewhere, so none may exist beside it, and only that file may
// reach hono's templates underneath. Text that is not HTML (a mail's plain-text part) needs no escaping.
// web/test/unit/escaping-rule.test.ts adds the web's own rules (no markup in a plain string, one way
// to send a page).

/** The one module that wraps hono's templates. */
const TEMPLATE = 'packages/runtime/src/html/template.ts';

const SOURCE_ROOTS = ['gateway/src', 'web/src', 'services', 'packages'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(path).isDirectory()) return filesUnder(path);
    return /\.(?:ts|mts|cts|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** The hand-written sources: gateway/src, web/src, services/<name>/src, packages/<name>/src. */
const sources = SOURCE_ROOTS.flatMap((top) => {
  const dir = join(root, top);
  if (top.includes('/')) return existsSync(dir) ? [dir] : [];
  return readdirSync(dir)
    .map((name) => join(dir, name, 'src'))
    .filter(existsSync);
})
  .flatMap(filesUnder)
  .map((path) => ({ name: relative(root, path).split(sep).join('/'), code: readFileSync(path, 'utf8') }));

/**
 * What escaping HTML by hand looks like: an entity of the five characters HTML gives meaning to (as a
 * map's value or a replacement), a map keyed by '&', a replace of a character class holding '&', or a
 * function (or an alias of one) named for escaping markup.
 */
const ESCAPER = new RegExp(
  [
    '&(?:amp|lt|gt|quot|apos|#0*39|#0*34|#x0*27|#x0*22);',
    String.raw`[{,]\s*['"]&['"]\s*:`,
    String.raw`\.replace(?:All)?\(\s*\/\[[^\]\n]*&[^\]\n]*\]\/`,
    String.raw`\b(?:\w*[eE]scape(?:Html|HTML|Xml|XML|Attr)\w*|\w*[hH]tml[eE]scape\w*|esc)\b`,
    String.raw`\b(?:const|let|var)\s+(?:h|e|escape)\s*=\s*(?:\(|\w+\s*=>|function\b)`,
    String.raw`\bfunction\s+(?:h|e|escape)\s*\(`,
  ].join('|'),
);

/** An import or require of hono, or of one of its modules. */
const HONO = /(?:from|import|require\()\s*\(?\s*['"]hono(?:\/[^'"]*)?['"]/;

describe('HTML is escaped by the one template library', () => {
  it('recognises an escape function written by hand, and not what merely resembles one', () => {
    for (const escaper of [
      `const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;' };`,
      `const MAP = { '<': '&#60;', '&': String.fromCharCode(38) + 'amp;' };`,
      `const h = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);`,
      'export const escapeHtml = (s: string): string => s;',
      'const e = escapeHtml;',
      'function escape(s) { return s; }',
      `s.replaceAll('&', '&amp;').replaceAll('<', '&lt;')`,
    ])
      expect([escaper, ESCAPER.test(escaper)]).toEqual([escaper, true]);
    for (const innocent of [
      'for (const h of Object.values(healthChecks)) h.close();',
      'let h = 2166136261;',
      'export const escapeRegExp = (s: string): string => s.replace(/[.*+?^$' + "{}()|[\\]\\\\]/g, '\\\\$&');",
      String.raw`s.replace(/[\r\n\t"\\<>]/g, ' ')`,
      'const escaped = JSON.stringify(name);',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source is the pattern's input
      "return `${url}${url.includes('?') ? '&' : '?'}session_id=${id}`;",
    ])
      expect([innocent, ESCAPER.test(innocent)]).toEqual([innocent, false]);
  });

  it(`finds the sources it checks, ${TEMPLATE} among them`, () => {
    const names = sources.map((f) => f.name);
    expect(names).toContain(TEMPLATE);
    for (const top of ['gateway/src/', 'web/src/', 'services/notification/src/', 'packages/runtime/src/'])
      expect([top, names.some((n) => n.startsWith(top))]).toEqual([top, true]);
  });

  it('has no escape function of its own anywhere but the template library', () => {
    const offending = sources
      .filter((f) => f.name !== TEMPLATE)
      .flatMap((f) =>
        f.code
          .split('\n')
          .map((line, i) => ({ line, at: `${f.name}:${i + 1}` }))
          .filter(({ line }) => ESCAPER.test(line))
          .map(({ line, at }) => `${at}: ${line.trim().slice(0, 80)}`),
      );
    expect(offending).toEqual([]);
  });

  it(`leaves hono to ${TEMPLATE}: no other source imports it`, () => {
    const importing = sources.filter((f) => HONO.test(f.code)).map((f) => f.name);
    expect(importing).toEqual([TEMPLATE]);
  });
});
