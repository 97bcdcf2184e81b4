import { AppError, metadataKeyProblem, textProblem } from '@licensing/runtime';
import { METADATA_MAX_ENTRIES, METADATA_VALUE_MAX_LENGTH } from '@licensing/proto';

// Metadata the vendor attaches to a session (Stripe's limits): a flat map of
// strings (keys by the shared rule; values free text, line breaks allowed).

export function checkMetadata(m: Record<string, string>): Record<string, string> {
  const entries = Object.entries(m);
  if (entries.length > METADATA_MAX_ENTRIES)
    throw AppError.invalid('metadata', `metadata holds at most ${METADATA_MAX_ENTRIES} entries`);
  for (const [k, v] of entries) {
    const badKey = metadataKeyProblem(k);
    if (badKey) throw new AppError('invalid_request', badKey.message, [badKey]);
    if (v.length > METADATA_VALUE_MAX_LENGTH)
      throw AppError.invalid(`metadata.${k}`, `metadata values are at most ${METADATA_VALUE_MAX_LENGTH} characters`);
    const badValue = textProblem(`metadata.${k}`, v, true);
    if (badValue) throw new AppError('invalid_request', badValue.message, [badValue]);
  }
  return Object.fromEntries(entries);
}
