// Entitlements: the feature codes a licence includes. A product's policy names some (live: every
// licence of the product has the product's current ones, unlike the rest of the policy, which a
// licence keeps from issue or renewal), a licence may add extras of its own, and the effective set is
// both together. One rule for a code and for a list of them, shared by the
// product and licence services (which check what they store), the gateway's request shapes (which
// check what a request sends, validations included) and the dashboard's forms.

/** The longest entitlement code. */
export const ENTITLEMENT_CODE_MAX_LENGTH = 64;
/** A code: a lower-case letter or digit, then up to 63 of letters, digits, `_`, `.` and `-`. */
export const ENTITLEMENT_CODE_PATTERN = `^[a-z0-9][a-z0-9_.-]{0,${ENTITLEMENT_CODE_MAX_LENGTH - 1}}$`;
const CODE = new RegExp(ENTITLEMENT_CODE_PATTERN);
/** The most codes a policy, a licence's extras or a validation request may name. */
export const MAX_ENTITLEMENTS = 100;

export const isEntitlementCode = (code: unknown): code is string => typeof code === 'string' && CODE.test(code);

/** Codes as they may be shown in a message: a bad one may be long or hold anything. */
const quoted = (code: unknown) => JSON.stringify(typeof code === 'string' ? code.slice(0, 70) : code);

/** What is wrong with a list, and where: the list's field, or one item of it (`entitlements[2]`). */
export interface EntitlementsProblem {
  field: string;
  message: string;
}

/**
 * What is wrong with a list of codes as sent, named after `field` (and the first bad code): not a
 * list, too many, a code that is not one (the item's place is the field), or one named twice.
 * Undefined: a good list.
 */
export function entitlementsProblem(
  field: string,
  codes: unknown,
  /** The most codes the list may hold (a release's list is shorter than a policy's). */
  max = MAX_ENTITLEMENTS,
): EntitlementsProblem | undefined {
  if (!Array.isArray(codes)) return { field, message: `${field} must be a list of entitlement codes` };
  if (codes.length > max) return { field, message: `${field} may name at most ${max} entitlements` };
  const seen = new Set<string>();
  for (const [i, code] of codes.entries()) {
    if (!isEntitlementCode(code)) {
      const item = `${field}[${i}]`;
      return {
        field: item,
        message: `${item} ${quoted(code)} is not an entitlement code (a-z, 0-9, then also _ . -; at most ${ENTITLEMENT_CODE_MAX_LENGTH} characters)`,
      };
    }
    if (seen.has(code)) return { field, message: `${field} names ${quoted(code)} twice` };
    seen.add(code);
  }
  return undefined;
}

/** The effective set of a licence: its product's current codes and its own extras, sorted, each once. */
export function effectiveEntitlements(
  policy: readonly string[] | undefined,
  extras: readonly string[] | undefined,
): string[] {
  if (!extras?.length) return policy?.length ? [...new Set(policy)].sort() : [];
  return [...new Set([...(policy ?? []), ...extras])].sort();
}

/** The requested codes the licence lacks, in the order asked (none: []). */
export function missingEntitlements(
  requested: readonly string[],
  policy: readonly string[] | undefined,
  extras: readonly string[] | undefined,
): string[] {
  return requested.filter((code) => !policy?.includes(code) && !extras?.includes(code));
}

/**
 * Codes typed in a form: separated by commas, spaces or line breaks, empty pieces dropped. Checked
 * afterwards with entitlementsProblem, as the API checks a list.
 */
export const entitlementsFromText = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);
