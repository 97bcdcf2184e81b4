import { createHash, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';

// Internal calls carry a shared secret in metadata. Both sides are hashed before
// the comparison so it is constant-time whatever the lengths.
export const INTERNAL_TOKEN_KEY = 'x-internal-token';
export const REQUEST_ID_KEY = 'x-request-id';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function tokenMatches(expected: string, metadata: Metadata): boolean {
  const presented = metadata.get(INTERNAL_TOKEN_KEY)[0];
  if (typeof presented !== 'string' || presented.length === 0) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}
