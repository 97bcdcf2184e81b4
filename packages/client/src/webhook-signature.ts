// Verifying webhook requests on the receiving side, per Standard Webhooks
// (standardwebhooks.com): HMAC-SHA256 of "id.timestamp.body" with the
// endpoint's whsec_ secret, any of the space-separated v1 signatures, and a
// timestamp within 5 minutes so a captured request cannot be replayed later.
// WebCrypto's verify compares in constant time.
import { describe } from './arguments';
import { base64ToBytes, utf8 } from './encoding';

/** What a webhook body holds. */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  [field: string]: unknown;
}

export type WebhookFailure = 'missing_headers' | 'invalid_timestamp' | 'timestamp_out_of_tolerance' | 'bad_signature';

export interface WebhookVerification {
  valid: boolean;
  /** Why not, when valid is false. */
  reason?: WebhookFailure;
  /** The parsed body, when valid and JSON. */
  event?: WebhookEvent;
}

/** Headers as fetch (Headers), Node's http (lower-case keys, maybe arrays) or a plain object gives them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Allowed distance between webhook-timestamp and now, in seconds (default 300). */
  toleranceS?: number;
  /** The time to check against (default: now). */
  now?: Date | number;
}

export const WEBHOOK_TOLERANCE_S = 300;

/**
 * Checks a webhook request. `body` must be the raw body exactly as received
 * (a string or bytes), not JSON parsed and serialised again.
 */
export async function verifyWebhook(
  body: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookVerification> {
  const bodyBytes = rawBody(body);
  const key = await hmacKey(secret);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) return { valid: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { valid: false, reason: 'invalid_timestamp' };
  const nowS = (options.now instanceof Date ? options.now.getTime() : (options.now ?? Date.now())) / 1000;
  if (Math.abs(nowS - Number(timestamp)) > (options.toleranceS ?? WEBHOOK_TOLERANCE_S))
    return { valid: false, reason: 'timestamp_out_of_tolerance' };

  const prefix = utf8(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + bodyBytes.length);
  signed.set(prefix);
  signed.set(bodyBytes, prefix.length);
  for (const part of signatures.split(' ')) {
    const [version, value] = part.split(',');
    if (version !== 'v1' || !value) continue;
    let given: Uint8Array<ArrayBuffer>;
    try {
      given = base64ToBytes(value);
    } catch {
      continue;
    }
    if (await globalThis.crypto.subtle.verify('HMAC', key, given, signed))
      return { valid: true, event: parseEvent(bodyBytes) };
  }
  return { valid: false, reason: 'bad_signature' };
}

function rawBody(body: unknown): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return utf8(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof Uint8Array) return new Uint8Array(body);
  throw new TypeError(
    `body must be the raw request body (a string or bytes), got ${describe(body)}: a parsed and re-serialised body does not verify`,
  );
}

async function hmacKey(secret: unknown): Promise<CryptoKey> {
  if (typeof secret !== 'string' || secret === '')
    throw new TypeError("secret must be the endpoint's whsec_… signing secret");
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new TypeError("secret must be the endpoint's whsec_… signing secret (base64 after the prefix)");
  }
  return globalThis.crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers)?.get === 'function') return (headers as Headers).get(name) ?? undefined;
  if (typeof headers !== 'object' || headers === null)
    throw new TypeError('headers must be a Headers object or a plain object of header names to values');
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

function parseEvent(bytes: Uint8Array): WebhookEvent | undefined {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as WebhookEvent;
  } catch {
    return undefined;
  }
}
