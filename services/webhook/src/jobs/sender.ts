import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { blockedAddress, REFUSED_ADDRESS, type UrlPolicy } from '../domain/ssrf';

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
}

const IP_LIKE = /\[?(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]*:[0-9a-f:.]+)\]?(?::\d+)?/gi;

/** An error as the endpoint's owner may see it in the delivery log: what happened, never an address it was resolved to. */
export function publicError(e: Error & { code?: string }): string {
  if (e.message.startsWith('refused:') || e.message.startsWith('timed out')) return e.message;
  const byCode: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ENOTFOUND: 'the host does not resolve',
    EAI_AGAIN: 'the host does not resolve',
    ETIMEDOUT: 'connection timed out',
    EPIPE: 'connection closed',
  };
  if (e.code && byCode[e.code]) return byCode[e.code];
  return e.message.replace(IP_LIKE, '[address]').slice(0, 200);
}

/**
 * One POST. The address is checked again as the connection is made (the
 * lookup hook sees the addresses actually dialled), so a DNS answer that
 * changed since the endpoint was created cannot reach inside. Redirects are
 * not followed (a 3xx is a failure); the whole exchange has a deadline.
 */
export function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  policy: UrlPolicy,
): Promise<SendResult> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null): SendResult => ({
    statusCode,
    error,
    latencyMs: Math.round(performance.now() - started),
  });
  return new Promise((resolve) => {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const why = blockedAddress(host, policy);
      if (why) return resolve(done(null, `refused: the URL ${REFUSED_ADDRESS}`));
    }
    const req = (u.protocol === 'https:' ? https : http).request(u, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      timeout: timeoutMs,
      lookup: (hostname, options, callback) => {
        dnsLookup(hostname, { all: true }, (err, addresses: LookupAddress[]) => {
          if (err) return callback(err, '', 4);
          const bad = addresses.find((a) => blockedAddress(a.address, policy));
          if (bad)
            return callback(
              Object.assign(new Error(`refused: the URL ${REFUSED_ADDRESS}`), { code: 'EREFUSED_ADDRESS' }),
              '',
              4,
            );
          if ((options as { all?: boolean }).all)
            return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
          callback(null, addresses[0].address, addresses[0].family);
        });
      },
    });
    const deadline = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on('response', (res) => {
      res.resume(); // the receiver's body is not needed
      res.on('end', () => {
        clearTimeout(deadline);
        resolve(done(res.statusCode ?? null, null));
      });
      res.on('error', (e) => {
        clearTimeout(deadline);
        resolve(done(res.statusCode ?? null, publicError(e)));
      });
    });
    req.on('error', (e) => {
      clearTimeout(deadline);
      resolve(done(null, publicError(e)));
    });
    req.end(body);
  });
}
