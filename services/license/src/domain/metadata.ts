import { AppError, metadataKeyProblem, textProblem } from '@licensing/runtime';
import { FINGERPRINT_MAX_LENGTH, METADATA_MAX_ENTRIES, METADATA_VALUE_MAX_LENGTH } from '@licensing/proto';

// Vendor metadata on a licence, Stripe-style: a small flat map of strings
// (keys by the shared rule; values free text, line breaks allowed).

/** Merges changes into the current map; an empty value removes its entry. */
export function mergeMetadata(
  current: Record<string, string>,
  changes: Record<string, string>,
): Record<string, string> {
  const out = { ...current };
  for (const [k, v] of Object.entries(changes)) {
    const badKey = metadataKeyProblem(k);
    if (badKey) throw new AppError('invalid_request', badKey.message, [badKey]);
    if (v.length > METADATA_VALUE_MAX_LENGTH)
      throw AppError.invalid(`metadata.${k}`, `metadata values are at most ${METADATA_VALUE_MAX_LENGTH} characters`);
    const badValue = textProblem(`metadata.${k}`, v, true);
    if (badValue) throw new AppError('invalid_request', badValue.message, [badValue]);
    if (v === '') delete out[k];
    else out[k] = v;
  }
  if (Object.keys(out).length > METADATA_MAX_ENTRIES)
    throw AppError.invalid('metadata', `a licence holds at most ${METADATA_MAX_ENTRIES} metadata entries`);
  return out;
}

/** Machine fingerprints are opaque to us: 1 to FINGERPRINT_MAX_LENGTH printable characters. */
export function checkFingerprint(fingerprint: string): string {
  const f = fingerprint.trim();
  if (!f) throw AppError.invalid('fingerprint', 'fingerprint is required');
  if (f.length > FINGERPRINT_MAX_LENGTH || !/^[\x20-\x7e]+$/.test(f))
    throw AppError.invalid(
      'fingerprint',
      `fingerprint must be 1 to ${FINGERPRINT_MAX_LENGTH} printable ASCII characters`,
    );
  return f;
}
