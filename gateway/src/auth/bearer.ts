import { AppError } from '@licensing/runtime';

// How an API key is sent: "Authorization: Bearer <key>", the key at most MAX_API_KEY_LENGTH
// characters. The one reading of the header, for the Express middleware and the validation fast
// path alike (a header this refuses is answered 401 by the middleware, and never by the fast path).

export const MAX_API_KEY_LENGTH = 200;
const BEARER = /^Bearer ([^\s]+)$/;

/** The API key an Authorization header carries; undefined when it is absent or not "Bearer <key>" (or too long). */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = BEARER.exec(header)?.[1];
  return key !== undefined && key.length <= MAX_API_KEY_LENGTH ? key : undefined;
}

/** As bearerKey(), or the 401 that says what is wrong with the header. */
export function bearerKeyOrRefusal(header: string | undefined): string {
  if (!header)
    throw new AppError('unauthorized', 'the Authorization header is missing; send "Authorization: Bearer <API key>"');
  const key = bearerKey(header);
  if (key === undefined) throw new AppError('unauthorized', 'the Authorization header must be "Bearer <API key>"');
  return key;
}
