import { actorTypes, type Actor, type RequestOrigin } from '@licensing/proto';

// Who made a request and from where travels from the edge (the gateway, the dashboard) to every
// service the request reaches, as one binary gRPC metadata entry, and from there onto the events
// the request makes (the audit log reads it). Everything in it is bounded and checked on arrival:
// a service believes the origin only from an authenticated internal caller, and only in this shape.

/** The gRPC metadata key (binary: `-bin`, so an e-mail or a user agent in any script travels as it is). */
export const REQUEST_ORIGIN_KEY = 'x-request-origin-bin';

/** The longest of each part kept: a user agent is cut, never refused (browsers send long ones). */
export const ORIGIN_LIMITS = { id: 100, name: 320, ip: 64, userAgent: 256 } as const;
const MAX_ENCODED = 1024;

/** Printable text only, cut to `max` characters: what a client sends in a header is untrusted. */
function clean(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const text = value.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, max);
  return text || undefined;
}

/** The origin of a request an edge received: the actor it authenticated, the client's address and agent. */
export function requestOrigin(actor: Actor, ip?: string, userAgent?: string | string[]): RequestOrigin {
  const name = clean(actor.name, ORIGIN_LIMITS.name);
  const address = clean(ip, ORIGIN_LIMITS.ip);
  const agent = clean(typeof userAgent === 'string' ? userAgent : undefined, ORIGIN_LIMITS.userAgent);
  return {
    actor: { type: actor.type, id: clean(actor.id, ORIGIN_LIMITS.id) ?? '', ...(name ? { name } : {}) },
    ...(address ? { ip: address } : {}),
    ...(agent ? { user_agent: agent } : {}),
  };
}

const encoded = new WeakMap<RequestOrigin, Buffer>();

/** The metadata value of an origin (made once per request however many calls it makes). */
export function encodeOrigin(origin: RequestOrigin): Buffer {
  let value = encoded.get(origin);
  if (!value) {
    value = Buffer.from(JSON.stringify(origin), 'utf8');
    encoded.set(origin, value);
  }
  return value;
}

/** The origin a caller sent, or undefined when absent or not one (too long, another shape). */
export function decodeOrigin(value: unknown): RequestOrigin | undefined {
  if (!Buffer.isBuffer(value) || value.length === 0 || value.length > MAX_ENCODED) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object') return undefined;
  const o = parsed as { actor?: { type?: unknown; id?: unknown; name?: unknown }; ip?: unknown; user_agent?: unknown };
  const type = o.actor?.type;
  if (typeof type !== 'string' || !(actorTypes as readonly string[]).includes(type)) return undefined;
  if (typeof o.actor?.id !== 'string' || !o.actor.id) return undefined;
  return requestOrigin(
    { type: type as Actor['type'], id: o.actor.id, name: o.actor.name as string },
    o.ip as string,
    o.user_agent as string,
  );
}
