import { ref } from './schemas';
import { type Op, json, problem, sessionId } from './operation';

// Unauthenticated operational endpoints, outside /api/v1.
export const publicPaths: Record<string, Record<string, Op>> = {
  '/healthz': {
    get: {
      operationId: 'liveness',
      summary: 'Liveness: the process answers',
      tags: ['Operations'],
      security: [],
      responses: { 200: { description: 'Alive', content: json(ref('Liveness')) } },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary:
        'Readiness: the gateway can authenticate (account service) and count limits (Redis or its in-memory fallback)',
      tags: ['Operations'],
      security: [],
      responses: {
        200: { description: 'Ready', content: json(ref('Readiness')) },
        503: { description: 'Not ready', content: json(ref('Readiness')) },
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openapi',
      summary: 'This document',
      tags: ['Operations'],
      security: [],
      responses: {
        200: {
          description: 'OpenAPI 3.1',
          content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } },
        },
      },
    },
  },
  '/docs': {
    get: {
      operationId: 'reference',
      summary: 'This document as a readable page',
      tags: ['Operations'],
      security: [],
      responses: { 200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
  '/checkout/{id}': {
    get: {
      operationId: 'hostedCheckoutPage',
      summary: 'The hosted payment page of a session (send customers here; the session id is the capability)',
      tags: ['Checkout'],
      security: [],
      parameters: [sessionId],
      responses: {
        200: { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
        404: { description: 'No such session (HTML)', content: { 'text/html': { schema: { type: 'string' } } } },
        429: {
          description: 'Too many requests from this address (HTML)',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
      },
    },
  },
  '/webhooks/stripe': {
    post: {
      operationId: 'stripeWebhook',
      summary: 'Receives Stripe events (point a Stripe webhook endpoint here)',
      description:
        'For Stripe, not for API clients: no API key (Stripe cannot send one), throttled per address (`STRIPE_WEBHOOK_REQUESTS_PER_MINUTE`), at most 256 KiB with a Content-Length. ' +
        "The body is passed untouched to the checkout service, which checks the `Stripe-Signature` header over the raw bytes with the endpoint's signing secret (300 s tolerance). " +
        'Handled: `checkout.session.completed`, `checkout.session.async_payment_succeeded`, `checkout.session.expired`, `charge.refunded`, `charge.dispute.created` (a chargeback, like a full refund); other types are acknowledged and ignored. ' +
        "A refund or dispute of a subscription's renewal or proration is recorded on the subscription (`refunds`) and leaves its licence as it is; one of its first payment cancels the subscription on Stripe and here, and applies the product's `refund_action` to the licence. " +
        'The event id counts, whatever the bytes: an event already handled, delivered again (Stripe signs each retry anew), does nothing (`duplicate: true`), and one delivered while another delivery handles it waits for that (409 if it takes over 10 s); the same event signed at the same time again is a replay (409). Any non-2xx answer makes Stripe retry.',
      tags: ['Checkout'],
      security: [],
      parameters: [
        {
          name: 'Stripe-Signature',
          in: 'header',
          required: true,
          description: 't=<unix time>,v1=<HMAC-SHA256 hex>',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', required: ['id', 'type', 'data'], description: 'A Stripe event object' },
          },
        },
      },
      responses: {
        200: {
          description: 'Accepted (handled, ignored, or a duplicate of one already handled)',
          content: json({
            type: 'object',
            required: ['received'],
            additionalProperties: false,
            properties: {
              received: { const: true },
              duplicate: { const: true },
              ignored: { type: 'string', description: 'Why the event needs nothing from us' },
            },
          }),
        },
        400: {
          ...problem,
          description: 'Bad or stale signature, or an event that does not match its session (nothing was done)',
        },
        404: {
          ...problem,
          description:
            'The checkout session the event names is unknown, or Stripe is not the payment provider (nothing was done)',
        },
        405: { ...problem, description: 'Not POST' },
        409: { ...problem, description: 'A replay: this very signed delivery was already received (nothing was done)' },
        413: { ...problem, description: 'Body over 256 KiB or without Content-Length' },
        429: { ...problem, description: 'Too many deliveries from this address' },
        503: { ...problem, description: 'The checkout service or its store is unavailable; Stripe retries' },
      },
    },
  },
};
