import { AppError } from '@licensing/runtime';
import { MAX_LICENSE_KEY_LENGTH, parseLicenseKey, weakForeignCredential } from '@licensing/proto';
import { bearerKey } from './bearer';

// The two credentials an Authorization header may carry, read in one place for the Express
// middleware and the validation fast path alike:
//   "Bearer <API key>"      a vendor's API key (full or validate scope)
//   "License <licence key>" an app acting as its own licence (auth/app-routes.ts says where)
// A header this refuses is answered 401 by the middleware, and never by the fast path.

const LICENSE = /^License ([^\s]+)$/;

export type Credential = { kind: 'api_key'; token: string } | { kind: 'license'; key: string };

/** The licence key of "License <key>" as sent (not yet normalised); undefined when the header is not that. */
export function licenseCredential(header: string | undefined): string | undefined {
  if (header === undefined || !header.startsWith('License ')) return undefined;
  const key = LICENSE.exec(header)?.[1];
  return key !== undefined && key.length <= MAX_LICENSE_KEY_LENGTH ? key : undefined;
}

const HOW = 'send "Authorization: Bearer <API key>" or "Authorization: License <licence key>"';

/** The credential of an Authorization header (a licence key in its canonical form), or the 401 that says what is wrong. */
export function credentialOrRefusal(header: string | undefined): Credential {
  if (!header) throw new AppError('unauthorized', `the Authorization header is missing; ${HOW}`);
  if (header.startsWith('License ') || header === 'License') {
    const sent = licenseCredential(header);
    const parsed = sent === undefined ? undefined : parseLicenseKey(sent);
    if (!parsed?.ok)
      throw new AppError(
        'unauthorized',
        'the License credential must be "License <licence key>", the key as issued (six groups of five characters, e.g. 7K3QF-9XW2M-…)',
      );
    const weak = parsed.foreign ? weakForeignCredential(parsed.key) : undefined;
    if (weak !== undefined)
      // Judged on the key alone, before any look-up: the answer says nothing of whether a licence has it.
      throw new AppError(
        'unauthorized',
        `this licence key was imported from another system and cannot be a License credential: ${weak} (see "Weak foreign keys" in the API documentation); the vendor can give the licence a new key (POST /api/v1/licenses/{key}/reroll), and an API key still validates it`,
      );
    return { kind: 'license', key: parsed.key };
  }
  const token = bearerKey(header);
  if (token === undefined)
    throw new AppError(
      'unauthorized',
      `the Authorization header must be "Bearer <API key>" or "License <licence key>"`,
    );
  return { kind: 'api_key', token };
}
