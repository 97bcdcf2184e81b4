import {
  Release,
  CheckoutSession,
  Email,
  Export,
  generateLicenseKey,
  Import,
  License,
  SigningKey,
  Subscription,
  WebhookDelivery,
  WebhookEndpoint,
  type CheckoutServiceService,
  type ImportServiceService,
  type LicenseServiceService,
  type NotificationServiceService,
  type ProductServiceService,
  type SubscriptionServiceService,
  type WebhookServiceService,
} from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';

// What the services answer to the POSTs that honour Idempotency-Key (the keyed POSTs of
// gateway/src/request-shapes/idempotent-posts.ts), over what a test holds: each answer is the message
// the service sends for the thing named (a licence of `licences`, an endpoint of `endpoints`, …), and
// a thing the test does not hold is not_found, as in the service. Every answer is new (a new id, a new
// secret), so an answer given twice is one the gateway replayed, not one the service gave again.

const now = () => new Date().toISOString();
const secret = () => `whsec_${Buffer.from(newId('s')).toString('base64')}`;

export interface KeyedWorld {
  licences: License[];
  /** Webhook endpoint ids of the account. */
  endpoints: Set<string>;
  subscriptions: Set<string>;
  sessions: Set<string>;
  /** The product subscriptions and checkout sessions are for. */
  product: string;
  /** The versions of that product's releases, each made once. */
  releases?: string[];
}

const licenceOf = (w: KeyedWorld, accountId: string, key: string) => {
  const found = w.licences.find((l) => l.key === key && l.account_id === accountId);
  if (!found) throw AppError.notFound('license');
  return found;
};

export function keyedLicenseHandlers(w: KeyedWorld): FakeHandlers<typeof LicenseServiceService> {
  return {
    transitionLicense: ({ account_id, key, action }) => {
      const l = licenceOf(w, account_id, key);
      const statuses: Record<string, string> = { suspend: 'suspended', revoke: 'revoked', reinstate: 'active' };
      const status = statuses[action] ?? l.status; // renew: the status it had
      return License.fromPartial({ ...l, status });
    },
    rerollLicense: ({ account_id, key }) =>
      License.fromPartial({ ...licenceOf(w, account_id, key), key: generateLicenseKey() }),
  };
}

export function keyedProductHandlers(w?: KeyedWorld): FakeHandlers<typeof ProductServiceService> {
  return {
    createRelease: ({ product_id, version }) => {
      w?.releases?.push(version);
      return Release.fromPartial({
        id: newId('rel'),
        product_id,
        version,
        channel: 'stable',
        status: 'draft',
        created_at: now(),
      });
    },
    rotateSigningKey: ({ id }) =>
      SigningKey.fromPartial({
        kid: newId('kid'),
        product_id: id,
        algorithm: 'Ed25519',
        public_key_pem: `-----BEGIN PUBLIC KEY-----\n${newId('pk')}\n-----END PUBLIC KEY-----\n`,
        created_at: now(),
        current: true,
      }),
  };
}

export function keyedWebhookHandlers(w: KeyedWorld): FakeHandlers<typeof WebhookServiceService> {
  const endpoint = (id: string, over: Partial<WebhookEndpoint> = {}) => {
    if (!w.endpoints.has(id)) throw AppError.notFound('webhook endpoint');
    return WebhookEndpoint.fromPartial({
      id,
      url: 'http://127.0.0.1:9/hook',
      events: ['*'],
      enabled: true,
      created_at: '2026-01-01T00:00:00.000Z',
      ...over,
    });
  };
  const delivery = (endpointId: string, eventType: string) =>
    WebhookDelivery.fromPartial({
      id: newId('dlv'),
      endpoint_id: endpointId,
      event_id: newId('evt'),
      event_type: eventType,
      status: 'pending',
      created_at: now(),
    });
  return {
    createEndpoint: ({ url, events, description }) => {
      const id = newId('we');
      w.endpoints.add(id);
      return { endpoint: endpoint(id, { url, events, description, created_at: now() }), secret: secret() };
    },
    rotateSecret: ({ id }) => ({ endpoint: endpoint(id), secret: secret() }),
    sendTestEvent: ({ id }) => (endpoint(id) ? delivery(id, 'webhook.test') : delivery(id, '')),
    retryDelivery: ({ endpoint_id }) =>
      endpoint(endpoint_id) ? delivery(endpoint_id, 'license.created') : delivery('', ''),
  };
}

export function keyedSubscriptionHandlers(w: KeyedWorld): FakeHandlers<typeof SubscriptionServiceService> {
  return {
    cancelSubscription: ({ account_id, id, at_period_end }) => {
      if (!w.subscriptions.has(id)) throw AppError.notFound('subscription');
      return Subscription.fromPartial({
        id,
        account_id,
        status: at_period_end ? 'active' : 'canceled',
        product_id: w.product,
        customer_email: 'subscriber@example.com',
        quantity: 1,
        current_period_start: '2026-01-01T00:00:00.000Z',
        current_period_end: '2026-02-01T00:00:00.000Z',
        interval: 'month',
        interval_count: 1,
        amount: 1000,
        currency: 'eur',
        cancel_at_period_end: at_period_end,
        created_at: '2026-01-01T00:00:00.000Z',
      });
    },
  };
}

export function keyedCheckoutHandlers(w: KeyedWorld): FakeHandlers<typeof CheckoutServiceService> {
  return {
    expireSession: ({ account_id, id }) => {
      if (!w.sessions.has(id)) throw AppError.notFound('checkout session');
      return CheckoutSession.fromPartial({
        id,
        account_id,
        product_id: w.product,
        status: 'expired',
        amount: 1000,
        currency: 'usd',
        quantity: 1,
        success_url: 'https://vendor.example/thanks',
        url: `https://pay.example/checkout/${id}`,
        expires_at: now(),
        created_at: now(),
      });
    },
  };
}

export function keyedNotificationHandlers(w: KeyedWorld): FakeHandlers<typeof NotificationServiceService> {
  const mail = (accountId: string, key: string, template: string) =>
    Email.fromPartial({
      id: newId('eml'),
      to: licenceOf(w, accountId, key).customer_email,
      template,
      status: 'queued',
      created_at: now(),
    });
  return {
    sendLicenseEmail: ({ account_id, key }) => mail(account_id, key, 'purchase'),
    requestSeatRescue: ({ account_id, key }) => mail(account_id, key, 'seat_rescue'),
  };
}

/** Imports and exports (the licence service's ImportService): a new one each time, as the service makes. */
export function keyedImportHandlers(): FakeHandlers<typeof ImportServiceService> {
  const imports = new Map<string, Import>();
  const held = (id: string) => {
    const found = imports.get(id);
    if (!found) throw AppError.notFound('import');
    return found;
  };
  return {
    createImport: ({ account_id, format }) => {
      const imp = Import.fromPartial({ id: newId('imp'), account_id, format, status: 'running', created_at: now() });
      imports.set(imp.id, imp);
      return imp;
    },
    appendImportChunk: ({ import_id }) => held(import_id),
    startImport: ({ id }) => held(id),
    abandonImport: ({ id }) => Import.fromPartial({ ...held(id), status: 'failed' }),
    createExport: ({ account_id }) =>
      Export.fromPartial({ id: newId('exp'), account_id, status: 'running', created_at: now() }),
  };
}
