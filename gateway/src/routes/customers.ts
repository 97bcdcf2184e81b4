import { randomBytes } from 'node:crypto';
import type { RequestHandler, Router } from 'express';
import { parseLicenseKey } from '@licensing/proto';
import { AppError, checkEmail } from '@licensing/runtime';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { KEY_MAX } from '../request-shapes/operations';
import { readBody } from '../request-shapes/shapes';
import { registerRouteTable, type RouteRow } from './route';

// The customer's side of a licence: seat rescue (an app whose seats are all taken e-mails its owner a
// one-time portal link to the licence's machines) and erasure (the customer's e-mail removed from every
// service, the licences kept working under a placeholder).

/** What a seat rescue answers: nothing about the e-mail it goes to. */
export const SEAT_RESCUE_QUEUED = { object: 'seat_rescue', status: 'queued' } as const;

/** An address no mailbox has (.invalid is reserved, RFC 2606), different for every erasure. */
export const erasurePlaceholder = (): string => `erased-${randomBytes(8).toString('hex')}@erased.invalid`;

/**
 * POST /licenses/:key/seat-rescue. An app credential may call it (auth/app-routes.ts): a licence for
 * itself only. The notification service refuses a second one within the hour (429, Retry-After) and a
 * licence without an e-mail (409).
 */
function requestSeatRescue(clients: Clients): RequestHandler {
  return async (req, res) => {
    readBody(req, {});
    const raw = String(req.params.key).slice(0, KEY_MAX + 1);
    const parsed = parseLicenseKey(raw);
    await clients.notifications.requestSeatRescue({
      account_id: principalOf(res).accountId,
      key: parsed.ok ? parsed.key : raw,
    });
    res.status(202).json(SEAT_RESCUE_QUEUED);
  };
}

/**
 * DELETE /customers/:email. Every service replaces the e-mail with one placeholder; then the licence
 * service, which publishes customer.erased; then the webhook service once more, for an event published
 * before the erasure but fanned out to a delivery after its first pass (docs/architecture.md, "Erasing a
 * customer"). Each step is idempotent, so a failed erasure is simply asked again.
 */
function eraseCustomer(clients: Clients): RequestHandler {
  return async (req, res) => {
    readBody(req, {});
    const email = checkEmail('email', String(req.params.email));
    const request = { account_id: principalOf(res).accountId, email, placeholder: erasurePlaceholder() };
    const step = <T>(call: Promise<T>) =>
      call.catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'invalid_request') throw err;
        throw new AppError(
          'service_unavailable',
          'the erasure did not finish everywhere: repeat the same request (every step is idempotent)',
        );
      });
    const others = await Promise.all([
      step(clients.checkouts.eraseCustomer(request)),
      step(clients.webhooks.eraseCustomer(request)),
      step(clients.notifications.eraseCustomer(request)),
    ]);
    const licenses = await step(clients.licenses.eraseCustomer(request));
    const lateDeliveries = await step(clients.webhooks.eraseCustomer(request));
    res.json({
      object: 'customer_erasure',
      placeholder: request.placeholder,
      erased: [...others, licenses, lateDeliveries].reduce((sum, r) => sum + r.erased, 0),
    });
  };
}

/** A licence's customer: seat rescue and erasure. */
export const customerRouteTable: readonly RouteRow<Clients>[] = [
  { method: 'post', path: '/licenses/:key/seat-rescue', role: 'support', handler: requestSeatRescue },
  { method: 'delete', path: '/customers/:email', role: 'admin', handler: eraseCustomer },
];

export function customerRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, customerRouteTable, clients);
}
