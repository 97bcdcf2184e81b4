import { isIP } from 'node:net';
import { URL_MAX_LENGTH } from '@licensing/proto';
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
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
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

/** The 16 bytes of an IPv6 address in any textual form (::, embedded dotted quad, zone id). */
export function v6Bytes(ip: string): number[] | null {
  let a = ip.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (dotted) {
    const o = dotted.slice(1).map(Number);
    if (o.some((x) => x > 255)) return null;
    a = `${a.slice(0, dotted.index) + ((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h ? h.split(':') : []);
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null;
  const all = [...head, ...Array(halves.length === 2 ? fill : 0).fill('0'), ...tail];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    const n = parseInt(g, 16);
    bytes.push(n >> 8, n & 255);
  }
  return bytes.length === 16 ? bytes : null;
}

const v4At = (b: number[], i: number) => `${b[i]}.${b[i + 1]}.${b[i + 2]}.${b[i + 3]}`;
const zero = (b: number[], from: number, to: number) => b.slice(from, to).every((x) => x === 0);

/**
 * Only global unicast (2000::/3) is public, and of it not the ranges that
 * carry an IPv4 address or are reserved; an IPv4 address embedded in IPv6
 * (mapped, compatible, NAT64, 6to4) is judged as that IPv4 address.
 */
function blockedV6(ip: string): string | null {
  const b = v6Bytes(ip);
  if (!b) return 'not an IP address';
  if (zero(b, 0, 15) && b[15] === 0) return 'unspecified';
  if (zero(b, 0, 15) && b[15] === 1) return 'loopback';
  // ::ffff:0:0/96 IPv4-mapped, ::/96 IPv4-compatible (deprecated), ::ffff:0:0:0/96 SIIT
  if (zero(b, 0, 10) && ((b[10] === 0xff && b[11] === 0xff) || (b[10] === 0 && b[11] === 0)))
    return blockedV4(v4At(b, 12)) ?? (b[10] === 0 ? 'IPv4-compatible' : null);
  if (zero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zero(b, 10, 12))
    return blockedV4(v4At(b, 12)) ?? 'IPv4-translated';
  // 64:ff9b::/96 NAT64 (well-known prefix) and 64:ff9b:1::/48 (local-use NAT64)
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b)
    return zero(b, 4, 12) ? (blockedV4(v4At(b, 12)) ?? null) : 'local NAT64';
  if (b[0] === 0xff) return 'multicast';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return 'link-local';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return 'site-local';
  if ((b[0] & 0xfe) === 0xfc) return 'private (unique local)';
  if ((b[0] & 0xe0) !== 0x20) return 'not global unicast';
  // 2002::/16 6to4 carries an IPv4 address in bytes 2-5
  if (b[0] === 0x20 && b[1] === 0x02) return blockedV4(v4At(b, 2)) ?? null;
  // 2001::/32 Teredo (an obfuscated IPv4 client), 2001:db8::/32 documentation, 2001:10::/28 ORCHID, 2001:2::/48 benchmarking
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return 'Teredo';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'documentation';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && (b[3] & 0xf0) === 0x10) return 'ORCHID';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 2 && b[4] === 0 && b[5] === 0) return 'benchmarking';
  return null;
}

/** Why an address may not be called, or null if it may (for this service only: never shown to a client). */
export function blockedAddress(ip: string, policy: UrlPolicy): string | null {
  const why = isIP(ip) === 4 ? blockedV4(ip) : isIP(ip) === 6 ? blockedV6(ip) : 'not an IP address';
  if (why === 'loopback' && policy.allowLoopback) return null;
  return why;
}

/** What a client is told about a refused address: nothing about the address or what it is. */
export const REFUSED_ADDRESS = 'must point to a public address';

/** Parses and checks a webhook URL, resolving its host; throws a 400 that says what is wrong. */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy, lookup: Lookup): Promise<string> {
  const refuse = (why: string) => AppError.invalid('url', `url ${why}`);
  if (!raw || raw.length > URL_MAX_LENGTH)
    throw refuse(`must be an absolute URL of at most ${URL_MAX_LENGTH} characters`);
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
  // Generic on purpose: the answer never shows what a name resolved to inside the network.
  if (addresses.some((ip) => blockedAddress(ip, policy))) throw refuse(REFUSED_ADDRESS);
  return url.toString();
}
