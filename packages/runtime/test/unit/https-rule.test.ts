import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpsVerdict, redirectToHttps } from '../../src/security/https-rule';

// The HTTPS rule the gateway (API: 426) and the web component (pages: a redirect) share.

const production = { NODE_ENV: 'production', HSTS_MAX_AGE_S: 600 };

/** A request as Express gives it, and a response that keeps what was written. */
function exchange(method: string, secure: boolean, path: string) {
  const req = { method, secure, path, host: 'licensing.example.com', originalUrl: `${path}?tab=keys`, headers: {} };
  const out = { status: 0, headers: {} as Record<string, unknown>, body: '', next: false };
  const res = {
    setHeader(name: string, value: unknown) {
      out.headers[name] = value;
    },
    writeHead(status: number, headers: Record<string, unknown> = {}) {
      out.status = status;
      Object.assign(out.headers, headers);
      return this;
    },
    end(body?: string) {
      out.body = body ?? '';
    },
  };
  redirectToHttps(production)(req as unknown as IncomingMessage & typeof req, res as unknown as ServerResponse, () => {
    out.next = true;
  });
  return out;
}

it('lets plain HTTP through outside production and for the probes; refuses it in production', () => {
  expect(httpsVerdict({ NODE_ENV: 'test' }, { secure: false, path: '/dashboard' })).toBe('allowed');
  expect(httpsVerdict(production, { secure: false, path: '/healthz' })).toBe('allowed');
  expect(httpsVerdict(production, { secure: false, path: '/dashboard' })).toBe('refused');
  expect(httpsVerdict(production, { secure: true, path: '/dashboard' })).toBe('secure');
});

it('answers a page over HTTPS with HSTS', () => {
  const out = exchange('GET', true, '/dashboard');
  expect(out).toMatchObject({ next: true, headers: { 'Strict-Transport-Security': 'max-age=600; includeSubDomains' } });
});

it('redirects a page asked for in clear text to the same URL over HTTPS, and refuses a form posted in clear text', () => {
  expect(exchange('GET', false, '/portal/acct_1')).toMatchObject({
    next: false,
    status: 308,
    headers: { Location: 'https://licensing.example.com/portal/acct_1?tab=keys' },
  });
  const post = exchange('POST', false, '/dashboard/sign-in');
  expect(post).toMatchObject({ next: false, status: 426 });
  expect(post.body).toContain('HTTPS required');
});
