import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { AppError, addressKey, type Logger } from '@licensing/runtime';
import { sendProblem } from '../http/errors';
import type { AttemptThrottle } from '@licensing/runtime';

/** Largest Stripe event the gateway passes on (the checkout service holds the same limit). */
export const STRIPE_WEBHOOK_BODY_LIMIT = 256 * 1024;

/**
 * POST /webhooks/stripe: Stripe's deliveries, public (Stripe cannot send an
 * API key) but throttled per address and size-limited, passed to the checkout
 * service's web server with the body untouched: it holds the signing secret
 * and checks Stripe's signature over the exact bytes.
 */
export function stripeWebhookProxy(target: string, perAddress: AttemptThrottle, log: Logger): RequestHandler[] {
  const PATH = '/webhooks/stripe';
  const guard = async (req: Request, res: Response, next: NextFunction) => {
    if (req.path !== PATH) return next();
    res.locals.route = PATH;
    if (req.method !== 'POST') {
      res.set('Allow', 'POST');
      return sendProblem(res, new AppError('method_not_allowed', `${req.method} is not allowed on ${PATH}; use POST`));
    }
    const length = Number(req.get('content-length') ?? NaN);
    if (!Number.isInteger(length) || length > STRIPE_WEBHOOK_BODY_LIMIT) {
      return sendProblem(
        res,
        new AppError(
          'payload_too_large',
          `a Stripe event must come with a Content-Length of at most ${STRIPE_WEBHOOK_BODY_LIMIT} bytes`,
        ),
      );
    }
    const address = addressKey(req.ip); // IPv6 by its /64
    // Every delivery is counted and judged in one atomic step.
    const wait = await perAddress.fail(address);
    if (wait !== null) {
      res.locals.rateLimitWindow = 'stripe_webhook';
      res.set('Retry-After', String(wait));
      return sendProblem(
        res,
        new AppError('rate_limited', `too many webhook deliveries from this address; retry in ${wait} s`),
      );
    }
    next();
  };
  const proxy = createProxyMiddleware<Request, Response>({
    target,
    pathFilter: (path, req) => path === PATH && req.method === 'POST',
    xfwd: true,
    proxyTimeout: 20_000,
    on: {
      proxyReq: (proxyReq, _req, res) => {
        proxyReq.setHeader('x-request-id', String((res as Response).locals?.requestId ?? ''));
      },
      error: (err, _req, res) => {
        log.warn({ err: (err as Error).message }, 'stripe webhook receiver unavailable');
        const out = res as ServerResponse<IncomingMessage>;
        if (!out.headersSent && typeof out.writeHead === 'function') {
          // Stripe retries any non-2xx answer for days: nothing is lost.
          out.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '5' });
          out.end(
            JSON.stringify({
              type: '/docs#error-service_unavailable',
              title: 'Service Unavailable',
              status: 503,
              detail: 'the checkout service is unavailable; retry later',
              code: 'service_unavailable',
            }),
          );
        }
      },
    },
  });
  return [guard, proxy];
}
