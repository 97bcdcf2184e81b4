import type { Router } from 'express';

// What every server-rendered surface sends: a strict CSP (its own stylesheet and script only, no inline
// code, no framing, forms post only to itself), and its static assets served by itself so the CSP can
// forbid everything else.

export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const PAGE_HEADERS = {
  'Content-Security-Policy': PAGE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
} as const;

/**
 * The security headers, then `/assets/app.css` and `/assets/app.js` (cached an hour), then
 * `Cache-Control: no-store` for every page (pages may show a secret).
 */
export function securedPages(r: Router, assets: { css: string; js: string }): void {
  r.use((_req, res, next) => {
    res.set(PAGE_HEADERS);
    next();
  });
  r.get(
    '/assets/app.css',
    (_req, res) => void res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(assets.css),
  );
  r.get(
    '/assets/app.js',
    (_req, res) => void res.type('application/javascript').set('Cache-Control', 'public, max-age=3600').send(assets.js),
  );
  r.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
}
