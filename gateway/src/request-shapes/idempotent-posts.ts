// The POSTs that honour Idempotency-Key, in one place: the gateway's middleware (routes/idempotency-keys.ts)
// keys the requests of these tables, and the OpenAPI document declares the header on every one of them.

/**
 * The POSTs that create or send something and honour `Idempotency-Key` here, through one mechanism (the
 * account service keeps each key's claim and answer: use-cases/request-keys.ts there). POST
 * /api/v1/licenses, /licenses/batch and /checkout keep theirs in the service that creates (the same
 * rules; the id of what they create is fixed by the first attempt). docs/api.md, "Idempotency", lists them.
 */
export const KEYED_POSTS = [
  '/products',
  '/products/:id/releases',
  '/products/:id/signing-keys/rotate',
  '/webhooks',
  '/webhooks/:id/rotate-secret',
  '/webhooks/:id/test',
  '/webhooks/:id/deliveries/:delivery/retry',
  '/subscriptions/:id/cancel',
  '/licenses/:key/suspend',
  '/licenses/:key/reinstate',
  '/licenses/:key/revoke',
  '/licenses/:key/renew',
  '/licenses/:key/reroll',
  '/licenses/:key/email',
  '/licenses/:key/seat-rescue',
  '/checkout/:id/expire',
  '/exports',
  '/imports',
] as const;

/** The POSTs whose service keeps their keys (above): the same rules, honoured there. */
export const SERVICE_KEYED_POSTS: readonly string[] = ['/licenses', '/licenses/batch', '/checkout'];

/** Every POST that honours Idempotency-Key, as the OpenAPI document declares them. */
export const IDEMPOTENT_POSTS: readonly string[] = [...KEYED_POSTS, ...SERVICE_KEYED_POSTS];

/**
 * Their answers carry a webhook signing secret: kept sealed for the API key that sent the request
 * (routes/sealed-answers.ts), and a key used on them is bound to that API key.
 */
export const SECRET_ANSWERS: readonly string[] = ['/webhooks', '/webhooks/:id/rotate-secret'];

/**
 * Routed before the JSON body parser (the import's body is the file, read as it streams; an export has
 * none): a request to them is told by its path and query only.
 */
export const STREAMED_POSTS: readonly string[] = ['/imports', '/exports'];
