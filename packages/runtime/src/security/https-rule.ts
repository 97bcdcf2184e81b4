import type { IncomingMessage, ServerResponse } from 'node:http';

// The HTTPS rule every HTTP component applies (the gateway to the API, the web component to the pages):
// HSTS on every HTTPS response, and in production no traffic in clear text but the probes. Plain HTTP
// counts as HTTPS only when a trusted proxy (TRUSTED_PROXIES) says it received the request over HTTPS.

/** The settings the rule reads (named as the components' configurations name them). */
export interface HttpsRuleSettings {
  NODE_ENV: string;
  HSTS_MAX_AGE_S: number;
}

/** The Strict-Transport-Security value of every HTTPS response. */
export const hstsValue = (config: Pick<HttpsRuleSettings, 'HSTS_MAX_AGE_S'>): string =>
  `max-age=${config.HSTS_MAX_AGE_S}; includeSubDomains`;

/** In production, traffic must have come over HTTPS (the probes excepted). */
export const httpsRequired = (config: Pick<HttpsRuleSettings, 'NODE_ENV'>): boolean => config.NODE_ENV === 'production';

/** Probes answer on plain HTTP everywhere: kubelets and load balancers call them directly. */
export const PLAIN_HTTP_ALLOWED: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/**
 * What the rule makes of a request: `secure` (answer it, with HSTS), `allowed` (plain HTTP where it may
 * be: not production, or a probe) or `refused` (plain HTTP in production).
 */
export function httpsVerdict(
  config: Pick<HttpsRuleSettings, 'NODE_ENV'>,
  req: { secure: boolean; path: string },
): 'secure' | 'allowed' | 'refused' {
  if (req.secure) return 'secure';
  return !httpsRequired(config) || PLAIN_HTTP_ALLOWED.has(req.path) ? 'allowed' : 'refused';
}

const HTTPS_REQUIRED_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>HTTPS required</title></head><body><main><h1>HTTPS required</h1><p>These pages are served over HTTPS only.</p></main></body></html>';

/**
 * The rule for pages a browser opens (Express's shape: `secure`, `path`, `host` and `originalUrl` as
 * Express gives them, X-Forwarded-* believed from trusted proxies only). A GET or HEAD in clear text is
 * redirected to the same URL over HTTPS (308): a page request carries no bearer token, and the session
 * cookies are Secure in production, so nothing secret crossed the wire. Any other method is refused
 * (426), so a form is never posted twice.
 */
export function redirectToHttps(config: HttpsRuleSettings) {
  const hsts = hstsValue(config);
  return (
    req: IncomingMessage & { secure: boolean; path: string; host?: string; originalUrl: string },
    res: ServerResponse,
    next: () => void,
  ) => {
    const verdict = httpsVerdict(config, req);
    if (verdict === 'secure') res.setHeader('Strict-Transport-Security', hsts);
    if (verdict !== 'refused') return next();
    res.setHeader('Cache-Control', 'no-store');
    if ((req.method === 'GET' || req.method === 'HEAD') && req.host) {
      res.writeHead(308, { Location: `https://${req.host}${req.originalUrl}` }).end();
      return;
    }
    res.writeHead(426, { 'Content-Type': 'text/html; charset=utf-8', Upgrade: 'TLS/1.2, HTTP/1.1' });
    res.end(HTTPS_REQUIRED_PAGE);
  };
}
