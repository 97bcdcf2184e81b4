// Erasing a customer's e-mail from stored webhook bodies. A body is JSON as the fan-out wrote it
// (JSON.stringify of the event), so the e-mail appears there in its JSON-escaped form, in any case.

/** `s` as a literal inside a regular expression (JavaScript's and the store's). */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How a string appears inside a JSON string literal (what JSON.stringify writes between the quotes). */
export const jsonForm = (s: string): string => JSON.stringify(s).slice(1, -1);

// The e-mail is replaced where it stands as a whole address, never inside a longer one: erasing
// bob@example.com leaves jimbob@example.com and bob@example.com.au as they are. A character that could
// continue its local part may not come before it; one that could continue its domain may not come after.
/** Characters of an address's local part (RFC 5322 atext and the dot), as in a regex class. */
const LOCAL_PART = "A-Za-z0-9.!#$%&'*+/=?^_`{|}~-";
/** Characters of a domain label (and `_`, which no domain has: kept whole rather than cut). */
const LABEL = 'A-Za-z0-9_-';

/**
 * The store's pattern (case-insensitive) for a body holding the e-mail as a whole address: its JSON form,
 * after the start, a character of no address or a JSON escape (`\n` …), and before the end or a character
 * that continues no domain. Lookarounds are not used: FerretDB runs Go's regexes, which have none. A body
 * it finds is a candidate only; eraseFromBody decides.
 */
export const bodyPattern = (email: string): string =>
  `(^|[^${LOCAL_PART}]|\\\\[nrtbf])${escapeRegExp(jsonForm(email))}($|[^.${LABEL}]|\\.($|[^${LABEL}]))`;

/** The e-mail as a whole address inside a string, in any case (letters of any script continue an address). */
const wholeAddress = (email: string): RegExp =>
  new RegExp(
    `(?<![\\p{L}\\p{N}${LOCAL_PART}])${escapeRegExp(email)}(?![\\p{L}\\p{N}${LABEL}]|\\.[\\p{L}\\p{N}${LABEL}])`,
    'giu',
  );

const replaceIn = (text: string, find: string, by: string) => text.replace(wholeAddress(find), () => by);

/**
 * The body with every occurrence of the e-mail as a whole address (in any case, inside a string or a
 * key) replaced by the placeholder. The body is parsed and written again the way the fan-out writes it,
 * so escaping is JSON's own; a body that is not JSON has the JSON forms replaced as text.
 */
export function eraseFromBody(body: string, email: string, placeholder: string): string {
  if (!email) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return replaceIn(body, jsonForm(email), jsonForm(placeholder));
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return replaceIn(v, email, placeholder);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [replaceIn(k, email, placeholder), walk(x)]));
    return v;
  };
  return JSON.stringify(walk(parsed));
}
