import type { FieldError } from '../core/errors';
import { printableFieldName } from './text';

// Keys of the vendor's metadata maps (licences, checkout sessions): 1 to 40
// letters, digits, "_" or "-". No "." and no "$": the map is stored as a
// sub-document, where a dotted key is a path (FerretDB refuses the write, a
// 500 before this rule) and a "$" key is an operator. Checked at the gateway
// and again by the service that owns the map.
export const METADATA_KEY_PATTERN = '^[A-Za-z0-9_-]{1,40}$';
const KEY = new RegExp(METADATA_KEY_PATTERN);
export const METADATA_KEY_RULE = 'metadata keys are 1 to 40 letters, digits, "_" or "-" (no "." or "$")';

/** The error for a metadata key outside the rule (field `<map>.<key>`, refused characters escaped), or undefined. */
export function metadataKeyProblem(key: string, map = 'metadata'): FieldError | undefined {
  return KEY.test(key) ? undefined : { field: `${map}.${printableFieldName(key)}`, message: METADATA_KEY_RULE };
}
