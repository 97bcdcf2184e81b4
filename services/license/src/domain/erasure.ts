// Erasing a customer's e-mail: where it is found and what replaces it. Pure text rules.

/** `s` as a literal inside a regular expression. */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A case-insensitive pattern of the e-mail as a substring (the store's regex and the replacement use the same). */
export const containing = (email: string): RegExp => new RegExp(escapeRegExp(email), 'gi');

/** `text` with every occurrence of the e-mail (any case) replaced by the placeholder. */
export function replaceEmail(text: string, email: string, placeholder: string): string {
  if (!email) return text;
  return text.replace(containing(email), () => placeholder);
}

/** The lower-cased, trimmed form every comparison uses (licences store customer_email_lc so). */
export const normalEmail = (email: string): string => email.trim().toLowerCase();
