// Erasing a customer's e-mail from stored webhook bodies. A body is JSON as the fan-out wrote it
// (JSON.stringify of the event), so the e-mail appears there in its JSON-escaped form, in any case.

/** `s` as a literal inside a regular expression (JavaScript's and the store's). */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How a string appears inside a JSON string literal (what JSON.stringify writes between the quotes). */
export const jsonForm = (s: string): string => JSON.stringify(s).slice(1, -1);

/** The pattern (case-insensitive) that finds a body holding the e-mail: its JSON form, escaped for a regex. */
export const bodyPattern = (email: string): string => escapeRegExp(jsonForm(email));

const replaceIn = (text: string, find: string, by: string) =>
  text.replace(new RegExp(escapeRegExp(find), 'gi'), () => by);

/**
 * The body with every occurrence of the e-mail (in any case, anywhere inside a string or a key)
 * replaced by the placeholder. The body is parsed and written again the way the fan-out writes it,
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
