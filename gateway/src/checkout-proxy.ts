import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { Logger } from '@licensing/runtime';
import type { AttemptThrottle } from './limits';

/**
 * The hosted checkout page is served by the checkout service; the gateway
 * exposes it under /checkout, public (the session id is the capability),
 * limited per client address.
 */
export function checkoutPageProxy(target: string, perAddress: AttemptThrottle, log: Logger): RequestHandler[] {
  const limit = async (req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/checkout/') || req.path.startsWith('/checkout/assets/')) return next();
    const address = req.ip ?? 'unknown';
    const wait = await perAddress.blockedFor(address);
    res.locals.route = '/checkout/*';
    if (wait !== null) {
      res.locals.rateLimitWindow = 'checkout_page';
      res.status(429).set('Retry-After', String(wait)).type('html').send('<!doctype html><title>Too many requests</title><p>Too many requests from your address. Please wait a minute and try again.</p>');
      return;
    }
    await perAddress.recordFailure(address); // counts every request, not only failures
    next();
  };
  const proxy = createProxyMiddleware<Request, Response>({
    target,
    pathFilter: '/checkout',
    xfwd: true,
    on: {
      proxyReq: (proxyReq, _req, res) => {
        proxyReq.setHeader('x-request-id', String((res as Response).locals?.requestId ?? ''));
      },
      error: (err, _req, res) => {
        log.warn({ err: (err as Error).message }, 'checkout page unavailable');
        const out = res as ServerResponse<IncomingMessage>;
        if (!out.headersSent && typeof out.writeHead === 'function') {
          out.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'retry-after': '5' });
          out.end('<!doctype html><title>Checkout unavailable</title><p>Checkout is unavailable for a moment. Nothing was charged. Please reload in a few seconds.</p>');
        }
      },
    },
  });
  return [limit, proxy];
}
