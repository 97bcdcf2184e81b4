import { createHash, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';

// Internal calls say who is calling (x-internal-caller) and prove it with that
// caller's own token (x-internal-token). A service knows only the SHA-256
// digests of its callers' tokens (INTERNAL_CALLERS), so a compromised service
// cannot impersonate its callers elsewhere. Digests are compared in constant time.
export const INTERNAL_TOKEN_KEY = 'x-internal-token';
export const INTERNAL_CALLER_KEY = 'x-internal-caller';
export const REQUEST_ID_KEY = 'x-request-id';
/** W3C trace context of a traced call (observability/tracing.ts). */
export const TRACEPARENT_KEY = 'traceparent';

/** The components that call services, and the operator CLI: every caller components.json lists (test/repository/components.test.ts checks). */
export const internalCallers = [
  'gateway',
  'web',
  'license',
  'checkout',
  'notification',
  'product',
  'operator',
] as const;
export type InternalCaller = (typeof internalCallers)[number];

/** Which methods (gRPC method names) each caller may call on one service; absent callers may call nothing. */
export type AccessPolicy = Partial<Record<InternalCaller, readonly string[]>>;

const digest = (s: string) => createHash('sha256').update(s).digest();
/** A slot no token matches: the digest of no string is 32 zero bytes (short of a SHA-256 break). */
const NO_TOKEN = Buffer.alloc(32);

/** The form INTERNAL_CALLERS holds a token in: `sha256:<hex>`. */
export const tokenDigest = (token: string): string => `sha256:${digest(token).toString('hex')}`;

/** At most this many tokens per caller are accepted at once: the current one and the one being rotated to. */
export const MAX_TOKENS_PER_CALLER = 2;

/**
 * Parses INTERNAL_CALLERS: `caller=sha256:<hex>` pairs, comma- or newline-separated.
 * A caller may be listed twice, with two digests, while its token is rotated (docs/operations.md,
 * "Rotating secrets"): either token is accepted, so no call is refused while callers roll over.
 * Unknown callers, a third digest and malformed entries are configuration errors.
 */
export function parseCallers(spec: string): Map<InternalCaller, Buffer[]> {
  const out = new Map<InternalCaller, Buffer[]>();
  for (const entry of spec
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z]+)=sha256:([0-9a-f]{64})$/.exec(entry);
    if (!m) throw new Error(`INTERNAL_CALLERS: "${entry.slice(0, 24)}…" is not caller=sha256:<64 hex digits>`);
    if (!(internalCallers as readonly string[]).includes(m[1]))
      throw new Error(`INTERNAL_CALLERS: unknown caller "${m[1]}" (known: ${internalCallers.join(', ')})`);
    const digests = out.get(m[1] as InternalCaller) ?? [];
    const d = Buffer.from(m[2], 'hex');
    if (digests.some((x) => x.equals(d))) continue;
    if (digests.length >= MAX_TOKENS_PER_CALLER)
      throw new Error(
        `INTERNAL_CALLERS: "${m[1]}" has more than ${MAX_TOKENS_PER_CALLER} tokens (an old and a new one)`,
      );
    out.set(m[1] as InternalCaller, [...digests, d]);
  }
  return out;
}

/** The caller the metadata proves, or undefined (no such caller, wrong or missing token). */
export function authenticateCaller(
  callers: Map<InternalCaller, Buffer[]>,
  metadata: Metadata,
): InternalCaller | undefined {
  const caller = metadata.get(INTERNAL_CALLER_KEY)[0];
  const presented = metadata.get(INTERNAL_TOKEN_KEY)[0];
  if (typeof caller !== 'string' || typeof presented !== 'string' || presented.length === 0) return undefined;
  const expected = callers.get(caller as InternalCaller);
  // Compare with every slot, known or not, so timing says nothing about which callers exist nor
  // which of a rotating caller's two tokens matched.
  const presentedDigest = digest(presented);
  let ok = false;
  for (let i = 0; i < MAX_TOKENS_PER_CALLER; i++)
    ok = timingSafeEqual(presentedDigest, expected?.[i] ?? NO_TOKEN) || ok;
  return ok && expected ? (caller as InternalCaller) : undefined;
}

/** Whether the policy lets this caller call this method. */
export const allowed = (policy: AccessPolicy, caller: InternalCaller, method: string): boolean =>
  policy[caller]?.includes(method) ?? false;
