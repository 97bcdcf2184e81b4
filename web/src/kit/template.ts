import type { Html } from '@licensing/runtime';
import type { Response } from 'express';

// The escaping templates live in packages/runtime (src/html/template.ts), shared with the gateway's
// /docs page and the notification service's mails; the web's pages import them from here, beside
// the one way to send a page.
export { type Html, html, joinHtml, nothing, trustedHtml } from '@licensing/runtime';

/** Sends a rendered page. Express would send a String object as JSON, so it goes as text/html. */
export function sendPage(res: Response, page: Html, status = 200): void {
  res.status(status).type('html').send(page.toString());
}
