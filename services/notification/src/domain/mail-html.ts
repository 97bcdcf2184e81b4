// The HTML part every mail of this service shares: the document around a body, and the support line.
// Written with html`…` of @licensing/runtime, so every interpolated string is escaped.
import { type Html, html, nothing } from '@licensing/runtime';

/** A mail's HTML document: the subject as its title, the body's lines inside. */
export const mailDocument = (subject: string, body: Html): string =>
  html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>
${subject}
</title></head><body style="font-family:sans-serif;line-height:1.5">
${body}
</body></html>`.toString();

/** "Questions? Write to …" with its line break, or nothing when the vendor has not set a support address. */
export const supportLine = (supportEmail: string): Html =>
  supportEmail ? html`<p>Questions? Write to <a href="mailto:${supportEmail}">${supportEmail}</a>.</p>\n` : nothing;
