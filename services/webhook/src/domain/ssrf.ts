import { isIP } from 'node:net';
import { AppError } from '@licensing/runtime';

// Webhook URLs are fetched by this service from inside the network, so a URL
// must never point back inside it (SSRF). Checked when an endpoint is created
// or changed, and again at connect time against the address actually dialled,
// so a DNS answer that changes (rebinding) does not get through.

export interface UrlPolicy {
  /** Production: only https. */
  httpsOnly: boolean;
  /** Development and tests only, by explicit setting: loopback receivers. */
  allowLoopback: boolean;
}

export type Lookup = (host: string) => Promise<string[]>;

const V4_BLOCKS: [string, number, string][] = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const v4ToInt = (ip: string) => ip.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;

function blockedV4(ip: string): string | null {
  const n = v4ToInt(ip);
  for (const [base, bits, why] of V4_BLOCKS) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((n & mask) === (v4ToInt(base) & mask)) return why;
  }
  return null;
}

function blockedV6(ip: string): string | null {
  const a = ip.toLowerCase();
  if (a === '::1') return 'loopback';
  if (a === '::') return 'unspecified';
  // IPv4-mapped addresses, dotted (::ffff:10.0.0.1) or as URL parsers print them (::ffff:a00:1).
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) return blockedV4(dotted[1]);
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hex) {
    const n = (parseInt(hex[1], 16) << 16) | parseInt(hex[2], 16);
    return blockedV4([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'));
  }
  if (/^f[cd]/.test(a)) return 'private (unique local)';
  if (/^fe[89ab]/.test(a)) return 'link-local';
  if (/^ff/.test(a)) return 'multicast';
  return null;
}

/** Why an address may not be called, or null if it may. */
export function blockedAddress(ip: string, policy: UrlPolicy): string | null {
  const why = isIP(ip) === 4 ? blockedV4(ip) : isIP(ip) === 6 ? blockedV6(ip) : 'not an IP address';
  if (why === 'loopback' && policy.allowLoopback) return null;
  return why;
}

/** Parses and checks a webhook URL, resolving its host; throws a 400 that says what is wrong. */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy, lookup: Lookup): Promise<string> {
  const refuse = (why: string) => AppError.invalid('url', `url ${why}`);
  if (!raw || raw.length > 2048) throw refuse('must be an absolute URL of at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must use https');
  if (policy.httpsOnly && url.protocol !== 'https:') throw refuse('must use https');
  if (url.username || url.password) throw refuse('must not contain credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await lookup(host).catch(() => [] as string[]);
  if (!addresses.length) throw refuse(`host "${host}" does not resolve`);
  for (const ip of addresses) {
    const why = blockedAddress(ip, policy);
    if (why) throw refuse(`points to a ${why} address (${ip}), which webhooks may not call`);
  }
  return url.toString();
}
