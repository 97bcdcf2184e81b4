import { isIPv4, isIPv6 } from 'node:net';

// What a per-address throttle counts a client under. An IPv4 address is one
// client. An IPv6 client is given a whole /64 by its provider (SLAAC, privacy
// addresses): counted per address it could take a fresh one for every request
// and never be throttled, so it is counted per /64. An IPv4 address seen
// through a dual-stack socket (::ffff:192.0.2.1) is the IPv4 client it is.

/** The throttle key of a client address: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64. */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  if (isIPv4(address)) return address;
  const bare = address.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names the interface, not the client
  const hextets = isIPv6(bare) ? expandIPv6(bare) : null;
  if (!hextets) return address.slice(0, 64); // not an address (e.g. 'unknown'): its own key
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff)
    return [hextets[6] >> 8, hextets[6] & 0xff, hextets[7] >> 8, hextets[7] & 0xff].join('.');
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (with "::" and a trailing dotted IPv4 part undone). */
function expandIPv6(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(2).map(Number);
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const front = head ? head.split(':') : [];
  const back = tail === undefined ? null : tail ? tail.split(':') : [];
  const groups = back === null ? front : [...front, ...Array(8 - front.length - back.length).fill('0'), ...back];
  if (groups.length !== 8) return null;
  return groups.map((g) => Number.parseInt(g, 16));
}
