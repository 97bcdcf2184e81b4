import { AppError, type FieldError } from '../core/errors';

// The characters no text of ours needs, refused in every string of every
// request at each edge (REST bodies, query strings and path parameters, the
// dashboard's forms, the hosted checkout page, the operator CLI) and again by
// every gRPC service, before anything is stored:
// - C0 controls (U+0000–U+001F), DEL and the C1 controls (U+007F–U+009F):
//   invisible, and PostgreSQL's JSONB under FerretDB cannot hold U+0000 at all
//   (a write would fail as a 500). Multi-line text (descriptions, metadata
//   values) may hold tab, line feed and carriage return; nothing else may.
// - Lone surrogates (U+D800–U+DFFF unpaired): they have no UTF-8 form, so they
//   would be stored as U+FFFD, silently changed.
// - Noncharacters U+FDD0–U+FDEF, U+FFFE and U+FFFF: for a program's internal
//   use, never for interchange.
// The same class is the `pattern` of every string in the OpenAPI document, so
// it is written as portable `\uXXXX` ranges (to be read with the `u` flag, as
// JSON Schema's ECMA-262 patterns are, where an escaped surrogate range
// matches unpaired halves only).
const ALWAYS =
  '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\ud800-\\udfff\\ufdd0-\\ufdef\\ufffe\\uffff';
const LINE_BREAKS = '\\u0009\\u000a\\u000d';

/** The characters refused in a field: the class body (no brackets), for a RegExp or a JSON Schema pattern. */
export const forbiddenTextClass = (multiline = false): string => (multiline ? ALWAYS : ALWAYS + LINE_BREAKS);

const SINGLE_LINE = new RegExp(`[${forbiddenTextClass(false)}]`, 'u');
const MULTI_LINE = new RegExp(`[${forbiddenTextClass(true)}]`, 'u');

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** The first refused character of `value` as U+XXXX, or undefined when the text is clean. */
export function forbiddenCharacter(value: string, multiline = false): string | undefined {
  const found = (multiline ? MULTI_LINE : SINGLE_LINE).exec(value);
  return found ? codePoint(found[0]) : undefined;
}

/** The error for a field holding a refused character, or undefined. */
export function textProblem(field: string, value: string, multiline = false): FieldError | undefined {
  const c = forbiddenCharacter(value, multiline);
  if (!c) return undefined;
  const allowed = multiline ? ' (tab and line breaks are allowed)' : '';
  return {
    field,
    message: `${field} must not contain control characters or unpaired surrogates (found ${c})${allowed}`,
  };
}

/** Refuses (400, naming the field) text with a character no field needs; returns the text. */
export function checkText(field: string, value: string, multiline = false): string {
  const problem = textProblem(field, value, multiline);
  if (problem) throw new AppError('invalid_request', problem.message, [problem]);
  return value;
}

/** A name for a field that came from the client (a map key, a form field): refused characters escaped, cut short. */
export function printableFieldName(name: string): string {
  const escaped = forbiddenCharacter(name) ? JSON.stringify(name).slice(1, -1) : name;
  return escaped.length > 80 ? `${escaped.slice(0, 80)}…` : escaped;
}

/**
 * The first string (or object key) anywhere in `value` with a character that
 * even multi-line text may not hold, as a field error naming its path
 * (`metadata.note`, `events[2]`), or undefined. The gRPC services run every
 * request through this before their handlers: the edges refuse more (line
 * breaks in one-line fields), this keeps the store safe from any caller.
 */
export function findForbiddenText(value: unknown, path = ''): FieldError | undefined {
  if (typeof value === 'string') return textProblem(path || 'value', value, true);
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array || value instanceof Date)
    return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findForbiddenText(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    const field = path ? `${path}.${printableFieldName(key)}` : printableFieldName(key);
    const keyProblem = textProblem(field, key, true);
    if (keyProblem) return keyProblem;
    const found = findForbiddenText(v, field);
    if (found) return found;
  }
  return undefined;
}

/**
 * The first refused character in a parsed form or query string (values are strings or lists of them;
 * the names count too), as a field error naming the field, or undefined. `multiline` names the fields
 * that are free text over several lines (a textarea).
 */
export function formTextProblem(
  values: Record<string, unknown> | undefined,
  multiline: ReadonlySet<string> = new Set(),
): FieldError | undefined {
  for (const [name, value] of Object.entries(values ?? {})) {
    const field = printableFieldName(name);
    const bad =
      textProblem(field, name) ??
      (Array.isArray(value) ? value : [value])
        .map((v) => (typeof v === 'string' ? textProblem(field, v, multiline.has(name)) : undefined))
        .find(Boolean);
    if (bad) return bad;
  }
  return undefined;
}
