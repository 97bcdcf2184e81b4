import { ImportServiceService, type License, type Product, SubscriptionServiceService } from '@licensing/proto';
import { AccountServiceClient } from '@licensing/proto';
import { connectMongo, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer, dropDatabaseOf } from '@licensing/test-support';
import { start as startAccount } from '../../../services/account/src/main';
import { KEYED_POSTS } from '../../src/request-shapes/idempotent-posts';
import { credentialOf, envFor } from '../../../scripts/lib/topology';
import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import { fakeLicence, fakeProduct, licenseHandlers, productHandlers } from './fake-service-answers';
import {
  keyedCheckoutHandlers,
  keyedImportHandlers,
  keyedLicenseHandlers,
  keyedNotificationHandlers,
  keyedProductHandlers,
  keyedSubscriptionHandlers,
  keyedWebhookHandlers,
  type KeyedWorld,
} from './fake-keyed-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// Idempotency-Key on the POSTs that create or send something: each route sent twice with one key
// reaches its service once, and the second answer is the first one again (Idempotent-Replayed); an
// answer holding a signing secret is kept sealed and replays only to the API key that sent it. The
// account service that keeps the keys runs for real (its claims and answers in its own store, which
// the sealing case looks into; what it decides alone: services/account/test/component/request-keys.test.ts);
// the services that do the work are faked (fake-keyed-answers.ts), so "one effect" is one call.
// The licence service's ImportService and the checkout service's SubscriptionService share their
// service's address, and a fake serves one definition: /imports, /exports and the subscription's
// cancel go through a second gateway that finds those fakes at the licence and checkout addresses.

let h: GatewayWithFakeServices;
let account: Awaited<ReturnType<typeof startAccount>>;
let operator: ReturnType<typeof createClient<AccountServiceClient>>;
let imports: FakePeer<typeof ImportServiceService>;
let subscriptions: FakePeer<typeof SubscriptionServiceService>;
let accountId: string;
let apiKey: string;
let mainUrl: string;
let api: ReturnType<typeof client>;
let side: ReturnType<typeof client>;
const products: Product[] = [];
const w: KeyedWorld = {
  licences: [],
  endpoints: new Set(),
  subscriptions: new Set(),
  sessions: new Set(),
  product: newId('prod'),
  releases: [],
};

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    startGateway: false,
    handlers: {
      product: { ...productHandlers(products), ...keyedProductHandlers(w) },
      license: { ...licenseHandlers(w.licences), ...keyedLicenseHandlers(w) },
      webhook: keyedWebhookHandlers(w),
      checkout: keyedCheckoutHandlers(w),
      notification: keyedNotificationHandlers(w),
    },
  });
  account = await startAccount({ env: envFor('account', h.topology, { port: 0 }) });
  operator = createClient(AccountServiceClient, `127.0.0.1:${account.port}`, credentialOf(h.topology, 'operator'));
  const created = await operator.call.createAccount({ name: 'Keyed', plan: 'enterprise' });
  accountId = created.account!.id;
  apiKey = created.secret;
  imports = await startFakePeer(ImportServiceService, keyedImportHandlers());
  subscriptions = await startFakePeer(SubscriptionServiceService, keyedSubscriptionHandlers(w));
  const accounts = { ACCOUNT_GRPC_ADDR: `127.0.0.1:${account.port}` };
  mainUrl = (await h.extraGateway(accounts)).url;
  api = client(mainUrl, apiKey);
  const other = await h.extraGateway({
    ...accounts,
    LICENSE_GRPC_ADDR: imports.address,
    CHECKOUT_GRPC_ADDR: subscriptions.address,
  });
  side = client(other.url, apiKey);
});

afterAll(async () => {
  operator?.close();
  await h?.stop();
  await imports?.stop();
  await subscriptions?.stop();
  await account?.stop();
  if (h) await dropDatabaseOf(h.topology.mongoUrl, `${h.topology.dbPrefix}_account`);
});

let n = 0;
const freshKey = () => `idem-${Date.now()}-${n++}`;
const vendor = () => ({ account: { id: accountId } }) as Parameters<typeof fakeLicence>[0];
/** A licence of the account the faked licence service holds: its key. */
const licence = (email = 'keyed@example.com'): string => {
  const l: License = fakeLicence(vendor(), newId('prod'), email);
  w.licences.push(l);
  return l.key;
};
/** How many calls of `method` a fake received whose request matches `where`. */
const calls = <R>(fake: { requestsTo(m: never): unknown[] }, method: string, where: (r: R) => boolean) =>
  (fake.requestsTo(method as never) as R[]).filter(where).length;

/** Each route: the request, the gateway it goes through, and how many calls reached the service. */
interface Case {
  route: (typeof KEYED_POSTS)[number];
  setUp: () => {
    path: string;
    body?: unknown;
    headers?: Record<string, string>;
    through?: 'side';
    effects: () => number;
  };
}

const byId = (id: string) => (r: { id: string }) => r.id === id;
const byKey = (key: string) => (r: { key: string }) => r.key === key;

const cases: Case[] = [
  {
    route: '/webhooks',
    setUp: () => {
      const url = `http://127.0.0.1:9/created-${freshKey()}`;
      return {
        path: '/api/v1/webhooks',
        body: { url, events: ['*'] },
        effects: () => calls(h.fakes.webhook, 'createEndpoint', (r: { url: string }) => r.url === url),
      };
    },
  },
  ...(['rotate-secret', 'test'] as const).map(
    (action): Case => ({
      route: `/webhooks/:id/${action}`,
      setUp: () => {
        const id = newId('we');
        w.endpoints.add(id);
        const method = action === 'test' ? 'sendTestEvent' : 'rotateSecret';
        return { path: `/api/v1/webhooks/${id}/${action}`, effects: () => calls(h.fakes.webhook, method, byId(id)) };
      },
    }),
  ),
  {
    route: '/webhooks/:id/deliveries/:delivery/retry',
    setUp: () => {
      const id = newId('we');
      w.endpoints.add(id);
      return {
        path: `/api/v1/webhooks/${id}/deliveries/${newId('dlv')}/retry`,
        effects: () => calls(h.fakes.webhook, 'retryDelivery', (r: { endpoint_id: string }) => r.endpoint_id === id),
      };
    },
  },
  {
    route: '/subscriptions/:id/cancel',
    setUp: () => {
      const id = newId('sub');
      w.subscriptions.add(id);
      return {
        path: `/api/v1/subscriptions/${id}/cancel`,
        body: { at_period_end: true },
        through: 'side',
        effects: () => calls(subscriptions, 'cancelSubscription', byId(id)),
      };
    },
  },
  {
    route: '/products',
    setUp: () => {
      const name = `Once ${freshKey()}`;
      return {
        path: '/api/v1/products',
        body: { name },
        effects: () => products.filter((p) => p.name === name).length,
      };
    },
  },
  {
    route: '/products/:id/releases',
    setUp: () => {
      const version = `1.0.${w.releases!.length}-once.${freshKey().replace(/[^0-9A-Za-z]/g, '')}`;
      return {
        path: `/api/v1/products/${w.product}/releases`,
        body: { version },
        effects: () => w.releases!.filter((v) => v === version).length,
      };
    },
  },
  {
    route: '/products/:id/signing-keys/rotate',
    setUp: () => {
      const product = fakeProduct({ ...vendor(), apiKey }, `Rotated ${freshKey()}`);
      products.push(product);
      return {
        path: `/api/v1/products/${product.id}/signing-keys/rotate`,
        effects: () => calls(h.fakes.product, 'rotateSigningKey', byId(product.id)),
      };
    },
  },
  ...(['suspend', 'revoke', 'reinstate', 'renew'] as const).map(
    (action): Case => ({
      route: `/licenses/:key/${action}`,
      setUp: () => {
        const key = licence();
        return {
          path: `/api/v1/licenses/${key}/${action}`,
          effects: () => calls(h.fakes.license, 'transitionLicense', byKey(key)),
        };
      },
    }),
  ),
  {
    route: '/licenses/:key/reroll',
    setUp: () => {
      const key = licence();
      return {
        path: `/api/v1/licenses/${key}/reroll`,
        body: { grace_hours: 1 },
        effects: () => calls(h.fakes.license, 'rerollLicense', byKey(key)),
      };
    },
  },
  ...(
    [
      ['email', 'sendLicenseEmail'],
      ['seat-rescue', 'requestSeatRescue'],
    ] as const
  ).map(
    ([action, method]): Case => ({
      route: `/licenses/:key/${action}`,
      setUp: () => {
        const key = licence(`mailed-${freshKey()}@example.com`);
        return {
          path: `/api/v1/licenses/${key}/${action}`,
          effects: () => calls(h.fakes.notification, method, byKey(key)),
        };
      },
    }),
  ),
  {
    route: '/checkout/:id/expire',
    setUp: () => {
      const id = newId('cs');
      w.sessions.add(id);
      return {
        path: `/api/v1/checkout/${id}/expire`,
        effects: () => calls(h.fakes.checkout, 'expireSession', byId(id)),
      };
    },
  },
  {
    route: '/exports',
    setUp: () => {
      const before = imports.requestsTo('createExport').length;
      return {
        path: '/api/v1/exports',
        through: 'side',
        effects: () => imports.requestsTo('createExport').length - before,
      };
    },
  },
  {
    route: '/imports',
    setUp: () => {
      const key = `imported-${freshKey()}-0123456789abcdef`;
      const before = imports.requestsTo('createImport').length;
      return {
        path: '/api/v1/imports?format=jsonl',
        body: `${JSON.stringify({ key, product_id: newId('prod'), customer_email: 'imported@example.com' })}\n`,
        headers: { 'content-type': 'application/x-ndjson' },
        through: 'side',
        effects: () => imports.requestsTo('createImport').length - before,
      };
    },
  },
];

it('covers every route that keeps its key in the account service', () => {
  expect(cases.map((c) => c.route).sort()).toEqual([...KEYED_POSTS].sort());
});

it.each(cases.map((c) => [c.route, c] as const))(
  '%s: sent twice with one key, one effect and one answer',
  async (_route, c) => {
    const { path, body, headers = {}, through, effects } = c.setUp();
    const send = through === 'side' ? side : api;
    const key = freshKey();
    const first = await send('POST', path, body, { ...headers, 'idempotency-key': key });
    expect([first.status, first.body?.code]).toEqual([expect.any(Number), undefined]);
    expect(first.status).toBeLessThan(300);
    const again = await send('POST', path, body, { ...headers, 'idempotency-key': key });
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([first.status, 'true']);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(effects()).toBe(1);
  },
);

it('the same key with another request is 422; a request that failed frees its key', async () => {
  const key = freshKey();
  expect((await api('POST', '/api/v1/products', { name: 'First body' }, { 'idempotency-key': key })).status).toBe(201);
  const other = await api('POST', '/api/v1/products', { name: 'Other body' }, { 'idempotency-key': key });
  expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
  const elsewhere = await side('POST', '/api/v1/exports', undefined, { 'idempotency-key': key });
  expect([elsewhere.status, elsewhere.body.code]).toEqual([422, 'idempotency_key_reused']);

  const failing = freshKey();
  const refused = await api('POST', '/api/v1/products', { name: '' }, { 'idempotency-key': failing });
  expect(refused.status).toBe(400);
  const retried = await api('POST', '/api/v1/products', { name: 'Fixed' }, { 'idempotency-key': failing });
  expect(retried.status).toBe(201);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
});

it('an answer holding a signing secret is stored sealed, and replays only to the API key that sent it', async () => {
  const key = freshKey();
  const body = { url: `http://127.0.0.1:9/sealed-${freshKey()}`, events: ['*'] };
  const first = await api('POST', '/api/v1/webhooks', body, { 'idempotency-key': key });
  expect(first.status).toBe(201);
  const secret = first.body.secret as string;
  expect(secret).toBeTruthy();
  const again = await api('POST', '/api/v1/webhooks', body, { 'idempotency-key': key });
  expect([again.headers.get('idempotent-replayed'), again.body.secret]).toEqual(['true', secret]);

  const db = await connectMongo(h.topology.mongoUrl, `${h.topology.dbPrefix}_account`);
  try {
    const stored = await eventually(async () => {
      const docs = await db
        .collection('request_keys')
        .find({ body_json: { $exists: true } })
        .toArray();
      const answers = docs.map((d) => String(d.body_json)).filter((b) => !b.startsWith('{'));
      expect(answers.length).toBeGreaterThan(0);
      return docs.map((d) => JSON.stringify(d)).join('\n');
    });
    expect(stored).not.toContain(secret);
  } finally {
    await db.close();
  }

  const other = await operator.call.createApiKey({ account_id: accountId, scope: 'full', name: 'second' });
  const asOther = await client(mainUrl, other.secret)('POST', '/api/v1/webhooks', body, { 'idempotency-key': key });
  expect([asOther.status, asOther.body.code]).toEqual([422, 'idempotency_key_reused']);
  expect(JSON.stringify(asOther.body)).not.toContain(secret);
});
