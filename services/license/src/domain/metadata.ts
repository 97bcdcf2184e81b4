import { AppError } from '@licensing/runtime';

// Vendor metadata on a licence, Stripe-style: a small flat map of strings.
export const METADATA_MAX_ENTRIES = 50;
const KEY = /^[A-Za-z0-9_.-]{1,40}$/;
const VALUE_MAX = 500;

/** Merges changes into the current map; an empty value removes its entry. */
export function mergeMetadata(
  current: Record<string, string>,
  changes: Record<string, string>,
): Record<string, string> {
  const out = { ...current };
  for (const [k, v] of Object.entries(changes)) {
    if (!KEY.test(k))
      throw AppError.invalid(`metadata.${k}`, 'metadata keys are 1 to 40 letters, digits, "_", "." or "-"');
    if (v.length > VALUE_MAX)
      throw AppError.invalid(`metadata.${k}`, `metadata values are at most ${VALUE_MAX} characters`);
    if (v === '') delete out[k];
    else out[k] = v;
  }
  if (Object.keys(out).length > METADATA_MAX_ENTRIES)
    throw AppError.invalid('metadata', `a licence holds at most ${METADATA_MAX_ENTRIES} metadata entries`);
  return out;
}

/** Machine fingerprints are opaque to us: 1 to 200 printable characters. */
export function checkFingerprint(fingerprint: string): string {
  const f = fingerprint.trim();
  if (!f) throw AppError.invalid('fingerprint', 'fingerprint is required');
  if (f.length > 200 || !/^[\x20-\x7e]+$/.test(f))
    throw AppError.invalid('fingerprint', 'fingerprint must be 1 to 200 printable ASCII characters');
  return f;
}
