import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { blockedAddress, type UrlPolicy } from '../domain/ssrf';

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
}

/**
 * One POST. The address is checked again as the connection is made (the
 * lookup hook sees the addresses actually dialled), so a DNS answer that
 * changed since the endpoint was created cannot reach inside. Redirects are
 * not followed (a 3xx is a failure); the whole exchange has a deadline.
 */
export function send(url: string, headers: Record<string, string>, body: string, timeoutMs: number, policy: UrlPolicy): Promise<SendResult> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null): SendResult => ({ statusCode, error, latencyMs: Math.round(performance.now() - started) });
  return new Promise((resolve) => {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const why = blockedAddress(host, policy);
      if (why) return resolve(done(null, `refused: ${why} address ${host}`));
    }
    const req = (u.protocol === 'https:' ? https : http).request(u, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      timeout: timeoutMs,
      lookup: (hostname, options, callback) => {
        dnsLookup(hostname, { all: true }, (err, addresses: LookupAddress[]) => {
          if (err) return callback(err, '', 4);
          const bad = addresses.find((a) => blockedAddress(a.address, policy));
          if (bad) return callback(new Error(`refused: ${blockedAddress(bad.address, policy)} address ${bad.address}`), '', 4);
          if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
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
        resolve(done(res.statusCode ?? null, e.message));
      });
    });
    req.on('error', (e) => {
      clearTimeout(deadline);
      resolve(done(null, e.message));
    });
    req.end(body);
  });
}
