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

/** A batch's distinct customer e-mails, lower-cased: what an erasure finds the batch by (its index). */
export const emailListOf = (items: readonly { customer_email: string }[]): string[] => [
  ...new Set(items.map((i) => normalEmail(i.customer_email))),
];

/**
 * A batch's items with the erased e-mail (lower-cased, `emailLc`) replaced by the placeholder, and the
 * batch's e-mail list to go with them; null when no item holds it.
 */
export function eraseFromItems<T extends { customer_email: string }>(
  items: readonly T[],
  emailLc: string,
  placeholder: string,
): { items: T[]; emails: string[] } | null {
  if (!items.some((i) => normalEmail(i.customer_email) === emailLc)) return null;
  const erased = items.map((i) =>
    normalEmail(i.customer_email) === emailLc ? { ...i, customer_email: placeholder } : i,
  );
  return { items: erased, emails: emailListOf(erased) };
}
