import { hkdfSync } from 'node:crypto';
import { seal, unseal } from '@licensing/runtime';

// The answers of POST /webhooks and /webhooks/{id}/rotate-secret carry the endpoint's signing secret, and
// an Idempotency-Key's answer is kept 24 hours to be replayed. It is kept sealed (AES-256-GCM) under a key
// derived from the API key that sent the request, which the service never stores (only its hash): the
// stored answer is unreadable to anyone reading the store, the operator included, and a retry with the
// same API key gets the same body, secret included, as Stripe replays it. Such a key is bound to that
// API key (its request hash includes it), so another API key of the account reusing it gets 422.

const PREFIX = 'sealed-v1:';

const answerKey = (credential: string, accountId: string, idempotencyKey: string) =>
  Buffer.from(hkdfSync('sha256', credential, accountId, `idempotent answer\0${idempotencyKey}`, 32));

/** The answer's JSON, sealed for the credential that sent the request under this key. */
export function sealAnswer(json: string, credential: string, accountId: string, idempotencyKey: string): string {
  return PREFIX + seal(Buffer.from(json), answerKey(credential, accountId, idempotencyKey));
}

export const isSealedAnswer = (stored: string) => stored.startsWith(PREFIX);

/** The JSON of a sealed answer; throws when this credential did not seal it (or it was altered). */
export function openAnswer(stored: string, credential: string, accountId: string, idempotencyKey: string): string {
  return unseal(stored.slice(PREFIX.length), answerKey(credential, accountId, idempotencyKey)).toString();
}
