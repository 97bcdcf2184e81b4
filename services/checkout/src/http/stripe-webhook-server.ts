import { createServer, type Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { saneRequestId, withRequestId, type Logger } from '@licensing/runtime';
import { NOT_CONFIGURED_MESSAGE } from '../domain/modes';
import type { StripeWebhook } from '../use-cases/stripe-webhook';

/** Largest Stripe event accepted (the gateway refuses bigger ones before they get here). */
export const WEBHOOK_BODY_LIMIT = 256 * 1024;

export interface StripeWebhookServerDeps {
  /** Present when payments go through Stripe. */
  stripeWebhook?: StripeWebhook;
  /** Stripe chosen, its keys not given yet: the webhook answers 503 saying so. */
  paymentsNotConfigured?: boolean;
  log: Logger;
}

const TITLES: Record<number, string> = {
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  503: 'Service Unavailable',
};

/** The project's error format, as JSON for Stripe. */
function problem(res: Response, status: number, code: string, detail: string): void {
  res
    .status(status)
    .type('application/problem+json')
    .send(
      JSON.stringify({
        type: `/docs#error-${code}`,
        title: TITLES[status] ?? 'Bad Request',
        status,
        detail,
        code,
        request_id: res.locals.requestId,
      }),
    );
}

/**
 * A body the parser refused (too large, an encoding it cannot undo, a bad charset) is the sender's
 * fault: its 4xx. Anything else (the store down) is 503, and Stripe retries.
 */
function webhookError(log: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const given = Number((err as { status?: number }).status);
    const status = given >= 400 && given < 500 ? given : 503;
    if (status === 503) log.error({ err }, 'stripe webhook error');
    const [code, detail] =
      status === 413
        ? ['payload_too_large', 'the event is too large']
        : status === 415
          ? ['unsupported_media_type', 'the event body must be JSON without a content encoding']
          : status === 503
            ? ['service_unavailable', 'the event could not be handled now; retry later']
            : ['invalid_request', 'the event body could not be read'];
    problem(res, status, code, detail);
  };
}

/**
 * Stripe's webhook receiver, POST /webhooks/stripe: machine to machine, so it stays with the service
 * that holds the signing secret and the payments (the gateway proxies it here with its body
 * untouched). The hosted checkout page itself is the web component's (CheckoutPageService).
 */
export function stripeWebhookApp({
  stripeWebhook,
  paymentsNotConfigured = false,
  log,
}: StripeWebhookServerDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The gateway's request id (set by its proxy): deliveries log and publish under it too.
  app.use((req, res, next) => {
    res.locals.requestId = saneRequestId(req.get('x-request-id')) ?? '';
    withRequestId(res.locals.requestId, next);
  });
  // Stripe signs the exact bytes it sent: the body is kept raw, never parsed before the signature is checked.
  app.post('/webhooks/stripe', express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT }), async (req, res) => {
    if (paymentsNotConfigured) return problem(res, 503, 'service_unavailable', NOT_CONFIGURED_MESSAGE);
    if (!stripeWebhook)
      return problem(res, 404, 'not_found', 'payments do not go through Stripe here (PAYMENT_PROVIDER=test)');
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const out = await stripeWebhook.receive(body, req.get('stripe-signature') ?? '', res.locals.requestId);
    if (out.status === 200) return void res.json(out.body);
    problem(res, out.status, out.error.code, out.error.message);
  });
  app.use((_req, res) => problem(res, 404, 'not_found', 'there is no such endpoint here: only POST /webhooks/stripe'));
  app.use(webhookError(log));
  return app;
}

export async function listen(app: express.Express, host: string, port: number): Promise<Server> {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
