import { checkoutList, importCreateQuery, subscriptionList } from '../request-shapes/operations';
import { listOf, ref } from './schemas';
import { queryParameters } from './shape-schema';
import {
  type Op,
  pathParam,
  pageParams,
  idempotencyHeader,
  op,
  sessionId,
  endpointId,
  subscriptionId,
} from './operation';

// Imports and exports, e-mails, checkout, subscriptions, webhook endpoints and status.
export const importCheckoutAndWebhookPaths: Record<string, Record<string, Op>> = {
  '/api/v1/imports': {
    post: op('createImport', {
      summary: 'Import licences with their keys (a job)',
      tag: 'Imports and exports',
      description:
        'The body is the file itself, up to 100 MB, streamed: JSON lines (`format=jsonl`, `Content-Type: application/x-ndjson`; an export of another account is such a file) or CSV (`format=csv|keygen|lemonsqueezy|gumroad`, `Content-Type: text/csv`). The job imports each row idempotently (a row already in the account with the same fields is skipped; the same key with other fields, or a key taken anywhere else, is rejected naming the row). 400 when the file is not of that format (its header or first line is wrong, or a CSV header has more than 256 columns); 409 while the account has another import waiting or running (one at a time); 413 over 100 MB; 415 for another Content-Type. The columns of each format are in docs/api.md, "Imports".',
      params: queryParameters(importCreateQuery),
      rawBody: {
        'application/x-ndjson': { type: 'string', description: 'One JSON object per line' },
        'text/csv': { type: 'string', description: 'A header row, then one licence per row' },
      },
      ok: { 202: { description: 'The import job, running (Location names it)', schema: ref('Import') } },
    }),
  },
  '/api/v1/imports/{id}': {
    get: op('getImport', {
      summary: "An import's progress and outcome",
      tag: 'Imports and exports',
      params: [pathParam('id', 'Import id (imp_…)')],
      ok: { 200: { description: 'The import job', schema: ref('Import') } },
    }),
  },
  '/api/v1/exports': {
    post: op('createExport', {
      summary: "Export the account's data as JSON lines (a job)",
      tag: 'Imports and exports',
      description:
        'Products, licences with their machines, checkout sessions and webhook endpoints (never secrets), one JSON object per line with its `type`. Downloadable for 24 hours once done; `format=jsonl` imports it into another account. The gateway that answered runs the job; if that process stops before the export is done (a crash, a restart), the export ends `failed` within a minute (its lease lapses), its `failure` saying to start a new export: POST again. 409 while another export of the account runs (one at a time).',
      ok: { 202: { description: 'The export job, running (Location names it)', schema: ref('Export') } },
    }),
  },
  '/api/v1/exports/{id}': {
    get: op('getExport', {
      summary: "An export's progress",
      tag: 'Imports and exports',
      description:
        '`running` until `done` or `failed`: an export always ends. One whose gateway process stopped mid-way is `failed` within a minute, with a `failure` that says so and to start a new export.',
      params: [pathParam('id', 'Export id (exp_…)')],
      ok: { 200: { description: 'The export job', schema: ref('Export') } },
    }),
  },
  '/api/v1/exports/{id}/download': {
    get: op('downloadExport', {
      summary: 'Download an export file',
      tag: 'Imports and exports',
      description:
        '409 while the export runs; 404 after its 24 hours, or once an erasure of a customer deleted the file (status expired).',
      params: [pathParam('id', 'Export id (exp_…)')],
      ok: {
        200: {
          description: 'The JSON lines',
          media: 'application/x-ndjson',
          schema: { type: 'string' },
        },
      },
    }),
  },
  '/api/v1/emails': {
    get: op('listEmails', {
      summary: 'The mail log: e-mails sent to your customers',
      tag: 'Licences',
      params: [...pageParams],
      ok: { 200: { description: 'A page of e-mails, newest first', schema: listOf('Email') } },
    }),
  },
  '/api/v1/checkout': {
    get: op('listCheckoutSessions', {
      summary: 'List checkout sessions',
      tag: 'Checkout',
      params: queryParameters(checkoutList),
      ok: { 200: { description: 'A page of sessions, newest first', schema: listOf('CheckoutSession') } },
    }),
    post: op('createCheckoutSession', {
      summary: 'Create a hosted checkout session',
      tag: 'Checkout',
      description:
        'The product must have a price. Send the customer to `url`; on payment a licence is issued and they land on `success_url`.',
      params: [idempotencyHeader],
      body: 'CheckoutCreate',
      ok: { 201: { description: 'The open session', schema: ref('CheckoutSession') } },
    }),
  },
  '/api/v1/checkout/{id}': {
    get: op('getCheckoutSession', {
      summary: 'Get a checkout session',
      tag: 'Checkout',
      params: [sessionId],
      ok: { 200: { description: 'The session', schema: ref('CheckoutSession') } },
    }),
  },
  '/api/v1/checkout/{id}/expire': {
    post: op('expireCheckoutSession', {
      summary: 'Expire an open session now',
      tag: 'Checkout',
      params: [sessionId],
      ok: { 200: { description: 'The expired session', schema: ref('CheckoutSession') } },
    }),
  },
  '/api/v1/subscriptions': {
    get: op('listSubscriptions', {
      summary: 'List subscriptions',
      tag: 'Subscriptions',
      description: 'Made by paid checkouts of recurring prices; each has one licence that follows it.',
      params: queryParameters(subscriptionList),
      ok: { 200: { description: 'A page of subscriptions, newest first', schema: listOf('Subscription') } },
    }),
  },
  '/api/v1/subscriptions/{id}': {
    get: op('getSubscription', {
      summary: 'Get a subscription, with its invoices',
      tag: 'Subscriptions',
      params: [subscriptionId],
      ok: { 200: { description: 'The subscription', schema: ref('Subscription') } },
    }),
  },
  '/api/v1/subscriptions/{id}/cancel': {
    post: op('cancelSubscription', {
      summary: 'Cancel a subscription, now or at its period end',
      tag: 'Subscriptions',
      description:
        'At the period end: the licence stays valid until then, then expires. Now: the licence expires now. 409 for a subscription already canceled.',
      params: [subscriptionId],
      body: 'SubscriptionCancel',
      ok: { 200: { description: 'The subscription after the change', schema: ref('Subscription') } },
    }),
  },
  '/api/v1/subscriptions/{id}/billing_portal': {
    post: op('createBillingPortal', {
      summary: 'A link where the customer updates their card',
      tag: 'Subscriptions',
      description:
        "Stripe subscriptions: a session of Stripe's Billing Portal for the subscription's Stripe customer (short-lived: expires_at is 5 minutes on), returning to the checkout's success_url. Test mode: a test page (valid for an hour). 409 (conflict) for a canceled subscription, or a Stripe one whose Stripe customer is not known yet (its next subscription event tells it); 503 when Stripe is unreachable.",
      params: [subscriptionId],
      ok: { 200: { description: 'The link', schema: ref('BillingPortal') } },
    }),
  },
  '/api/v1/subscriptions/{id}/test_clock': {
    post: op('advanceSubscriptionTestClock', {
      summary: "Test mode: move a subscription's clock forward",
      tag: 'Subscriptions',
      description:
        'Bills each period end passed with the test card on file (4242 4242 4242 4242 always pays; 4000 0000 0000 0341 pays the first time, then fails: it pays only a charge made when it is given, so a trial bought with it ends unpaid and its licence expires) and makes the state changes (renewals, past due, unpaid, trial ends, cancellation) with their events. 400 for a time not after the clock or more than 5 years ahead; 409 for a live subscription; 404 with PAYMENT_PROVIDER=stripe.',
      params: [subscriptionId],
      body: 'SubscriptionTestClock',
      ok: { 200: { description: 'The subscription at its new time', schema: ref('Subscription') } },
    }),
  },
  '/api/v1/webhooks': {
    get: op('listWebhookEndpoints', {
      summary: 'List webhook endpoints',
      tag: 'Webhooks',
      params: pageParams,
      ok: { 200: { description: 'A page of endpoints', schema: listOf('WebhookEndpoint') } },
    }),
    post: op('createWebhookEndpoint', {
      summary: 'Add a webhook endpoint',
      tag: 'Webhooks',
      description: 'The signing secret is in this answer only.',
      body: 'WebhookEndpointCreate',
      ok: { 201: { description: 'The endpoint with its secret', schema: ref('WebhookEndpointWithSecret') } },
    }),
  },
  '/api/v1/webhooks/{id}': {
    get: op('getWebhookEndpoint', {
      summary: 'Get a webhook endpoint',
      tag: 'Webhooks',
      params: [endpointId],
      ok: { 200: { description: 'The endpoint', schema: ref('WebhookEndpoint') } },
    }),
    patch: op('updateWebhookEndpoint', {
      summary: 'Change or re-enable a webhook endpoint',
      tag: 'Webhooks',
      params: [endpointId],
      body: 'WebhookEndpointUpdate',
      ok: { 200: { description: 'The endpoint after the change', schema: ref('WebhookEndpoint') } },
    }),
    delete: op('deleteWebhookEndpoint', {
      summary: 'Delete a webhook endpoint',
      tag: 'Webhooks',
      params: [endpointId],
      ok: { 204: { description: 'Deleted; pending deliveries are dropped' } },
    }),
  },
  '/api/v1/webhooks/{id}/deliveries': {
    get: op('listWebhookDeliveries', {
      summary: "The endpoint's delivery log",
      tag: 'Webhooks',
      params: [endpointId, ...pageParams],
      ok: { 200: { description: 'A page of deliveries, newest first', schema: listOf('WebhookDelivery') } },
    }),
  },
  '/api/v1/webhooks/{id}/deliveries/{delivery}/retry': {
    post: op('retryWebhookDelivery', {
      summary: 'Deliver again now',
      tag: 'Webhooks',
      params: [endpointId, pathParam('delivery', 'Delivery id')],
      ok: { 200: { description: 'The delivery, pending again', schema: ref('WebhookDelivery') } },
    }),
  },
  '/api/v1/webhooks/{id}/test': {
    post: op('sendTestWebhook', {
      summary: 'Send a webhook.test event',
      tag: 'Webhooks',
      params: [endpointId],
      ok: { 202: { description: 'Queued for delivery', schema: ref('WebhookDelivery') } },
    }),
  },
  '/api/v1/webhooks/{id}/rotate-secret': {
    post: op('rotateWebhookSecret', {
      summary: 'Rotate the signing secret',
      tag: 'Webhooks',
      description:
        'Deliveries are signed with both secrets for 24 h, then with the new one only. At most two secrets sign: rotating again within the 24 h stops the oldest at once.',
      params: [endpointId],
      ok: { 200: { description: 'The endpoint with its new secret', schema: ref('WebhookEndpointWithSecret') } },
    }),
  },
  '/api/v1/status': {
    get: op('getStatus', {
      summary: 'System status',
      tag: 'Operations',
      description: 'Every service and dependency with its latency; `degraded` means requests may still succeed.',
      ok: { 200: { description: 'Status', schema: ref('Status') } },
      validateScope: true,
    }),
  },
};
