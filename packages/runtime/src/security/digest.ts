import * as crypto from 'node:crypto';

type Encoding = 'hex' | 'base64url';

// crypto.hash (Node ≥ 20.12) digests in one call, without the Hash object createHash() builds:
// a quarter of the cost, which shows where a key is digested on every request (the gateway's
// API-key and licence-key look-ups). Older Node 20 releases fall back to createHash().
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: Encoding) => string }).hash;

/** SHA-256 of a text (UTF-8), as hex or base64url. */
export const sha256: (text: string, encoding: Encoding) => string = oneShot
  ? (text, encoding) => oneShot('sha256', text, encoding)
  : (text, encoding) => crypto.createHash('sha256').update(text).digest(encoding);
