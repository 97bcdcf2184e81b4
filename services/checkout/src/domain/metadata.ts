import { AppError } from '@licensing/runtime';

// Metadata the vendor attaches to a session (Stripe's limits): a flat map of strings.
const KEY = /^[A-Za-z0-9_.-]{1,40}$/;

export function checkMetadata(m: Record<string, string>): Record<string, string> {
  const entries = Object.entries(m);
  if (entries.length > 50) throw AppError.invalid('metadata', 'metadata holds at most 50 entries');
  for (const [k, v] of entries) {
    if (!KEY.test(k))
      throw AppError.invalid(`metadata.${k}`, 'metadata keys are 1 to 40 letters, digits, "_", "." or "-"');
    if (v.length > 500) throw AppError.invalid(`metadata.${k}`, 'metadata values are at most 500 characters');
  }
  return Object.fromEntries(entries);
}
