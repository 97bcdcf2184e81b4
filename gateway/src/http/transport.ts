import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { createServer as createHttpServer, type Server as HttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { NextFunction, Request, Response } from 'express';
import { AppError, ConfigError, hstsValue, httpsRequired, httpsVerdict, type Logger } from '@licensing/runtime';

// Transport security: TLS termination, HSTS, and the production rule that API
// traffic never travels in clear text. Plain HTTP is accepted in production only
// from a configured proxy that says it received the request over HTTPS. The rule
// itself is the runtime's (https-rule.ts), shared with the web component's pages.

/** The settings transport security reads (named as the gateway's configuration names them). */
export interface TransportSettings {
  NODE_ENV: string;
  TLS_CERT_FILE: string;
  TLS_KEY_FILE: string;
  TRUSTED_PROXIES: string;
  HSTS_MAX_AGE_S: number;
}

const SERVER_OPTIONS = { keepAliveTimeout: 65_000, headersTimeout: 20_000, requestTimeout: 30_000 };

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR range, or one of express's names for private ranges. */
function validProxy(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** Transport settings checked before anything connects; every problem in one message, like loadConfig. */
export function checkTransportConfig(config: TransportSettings): void {
  const problems: string[] = [];
  if (Boolean(config.TLS_CERT_FILE) !== Boolean(config.TLS_KEY_FILE))
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  if (httpsRequired(config) && !config.TLS_CERT_FILE && !config.TRUSTED_PROXIES) {
    problems.push(
      'production needs HTTPS: set TLS_CERT_FILE and TLS_KEY_FILE, or TRUSTED_PROXIES for the proxy that terminates TLS',
    );
  }
  for (const entry of proxyList(config))
    if (!validProxy(entry))
      problems.push(`TRUSTED_PROXIES: "${entry}" is not an address, a CIDR range, or loopback/linklocal/uniquelocal`);
  if (config.TLS_CERT_FILE && config.TLS_KEY_FILE) {
    try {
      createSecureContext({ cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      problems.push(
        `TLS_CERT_FILE/TLS_KEY_FILE ${e.code === 'ENOENT' || e.code === 'EACCES' ? `cannot be read (${e.code}: ${e.path})` : `do not hold a matching PEM certificate and key (${e.message})`}`,
      );
    }
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
}

const proxyList = (config: TransportSettings) =>
  config.TRUSTED_PROXIES.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The value of express's `trust proxy`: only the listed proxies, never "any". */
export function trustedProxies(config: TransportSettings): string[] | false {
  const list = proxyList(config);
  return list.length ? list : false;
}

export interface GatewayServer {
  server: HttpServer | HttpsServer;
  tls: boolean;
  /** The certificate chain new connections get (PEM), when TLS is on: its expiry is a metric. */
  certificate(): Buffer | undefined;
  /** Reads the certificate and key files again (SIGHUP); new connections use them. */
  reloadTls(): void;
}

export function createGatewayServer(config: TransportSettings, app: RequestListener, log: Logger): GatewayServer {
  if (!config.TLS_CERT_FILE)
    return {
      server: createHttpServer(SERVER_OPTIONS, app),
      tls: false,
      certificate: () => undefined,
      reloadTls: () => undefined,
    };
  const read = () => ({ cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) });
  let pair = read();
  const server = createHttpsServer({ ...SERVER_OPTIONS, ...pair, minVersion: 'TLSv1.2' }, app);
  return {
    server,
    tls: true,
    certificate: () => pair.cert,
    reloadTls() {
      try {
        const next = read();
        server.setSecureContext({ ...next, minVersion: 'TLSv1.2' });
        pair = next;
        log.info({ cert: config.TLS_CERT_FILE }, 'TLS certificate reloaded');
      } catch (err) {
        // A half-written or mismatched pair keeps the previous one in use.
        log.error({ err: (err as Error).message }, 'TLS certificate reload failed; still serving the previous one');
      }
    },
  };
}

/**
 * HSTS on every HTTPS response; in production, 426 for API traffic that came in
 * clear text (no redirect: the bearer token has already crossed the wire, and a
 * redirected POST would send it again).
 */
export function requireHttps(config: TransportSettings) {
  const hsts = hstsValue(config);
  return (req: Request, res: Response, next: NextFunction) => {
    const verdict = httpsVerdict(config, req);
    if (verdict === 'secure') res.setHeader('Strict-Transport-Security', hsts);
    if (verdict !== 'refused') return next();
    next(
      new AppError(
        'https_required',
        'this API is served over HTTPS only; send the request to the https:// address (and consider the API key exposed if it was sent in clear text)',
      ),
    );
  };
}
