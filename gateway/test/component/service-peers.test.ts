import type { ServiceDefinition } from '@grpc/grpc-js';
import {
  AccountServiceService,
  CheckoutServiceService,
  LicenseServiceService,
  NotificationServiceService,
  Product,
  ProductServiceService,
  WebhookServiceService,
} from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import { start } from '../../src/main';
import { services } from '../../../scripts/lib/components';
import { envFor, pageKey, type Addrs } from '../../../scripts/lib/topology';
import { setUpEvents } from '../../../scripts/lib/events-setup';
import { testTopology } from '../../../test/support/stack';

// The gateway alone, against real NATS and Redis, with every service it calls faked at the gRPC
// boundary: an API key is who the account service says it is, a resource is what its service answers,
// and a service that refuses or is away becomes the problem JSON a client can act on, never a 500.

const t = testTopology();
const account = newId('acct');
const KEY = `lk_full_${newId('k')}`;
const editor = Product.fromPartial({ id: newId('prod'), account_id: account, name: 'Editor' });

const definitions: Record<string, ServiceDefinition> = {
  account: AccountServiceService,
  product: ProductServiceService,
  license: LicenseServiceService,
  checkout: CheckoutServiceService,
  webhook: WebhookServiceService,
  notification: NotificationServiceService,
};

let accounts: FakePeer<typeof AccountServiceService>;
let products: FakePeer<typeof ProductServiceService>;
const others: FakePeer<ServiceDefinition>[] = [];
let gateway: Awaited<ReturnType<typeof start>>;

const get = (path: string, key = KEY) =>
  fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  accounts = await startFakePeer(AccountServiceService, {
    authenticate: ({ secret }) => {
      if (secret !== KEY) throw new AppError('unauthorized', 'invalid API key');
      return {
        account: {
          id: account,
          name: 'Acme',
          plan: 'pro',
          created_at: '',
          per_minute_limit: 0,
          per_hour_limit: 0,
          support_email: '',
        },
        key_id: 'key_1',
        scope: 'full',
      };
    },
  });
  products = await startFakePeer(ProductServiceService, {
    listProducts: ({ account_id }) => ({
      data: account_id === account ? [editor] : [],
      page: { has_more: false, next_cursor: '' },
    }),
    getProduct: ({ id }) => {
      throw new AppError('not_found', `product ${id} not found`);
    },
  });
  const addrs: Addrs = { account: accounts.address, product: products.address };
  for (const s of services) {
    if (!addrs[s.name]) {
      const fake = await startFakePeer(definitions[s.name], {});
      others.push(fake);
      addrs[s.name] = fake.address;
    }
    // A service's web page the gateway proxies: nothing listens there, and no test here asks for it.
    if (s.ports.http !== undefined) addrs[pageKey(s.name)] = 'http://127.0.0.1:9';
  }
  // The web component's pages, passed on by the gateway: nothing listens there either.
  addrs[pageKey('web')] = 'http://127.0.0.1:9';
  await setUpEvents(t);
  gateway = await start({ env: envFor('gateway', t, { port: 0, addrs }) });
});

afterAll(async () => {
  await gateway?.stop();
  await Promise.all([accounts?.stop(), products?.stop(), ...others.map((o) => o.stop())]);
});

it('answers with what the product service says, for the account the account service names', async () => {
  const res = await get('/api/v1/products');
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: Array<{ id: string; name: string }>; has_more: boolean };
  expect(body.data.map((p) => [p.id, p.name])).toEqual([[editor.id, 'Editor']]);
  expect(accounts.calls[0]).toMatchObject({ method: 'authenticate', caller: 'gateway', request: { secret: KEY } });
  expect(products.requestsTo('listProducts').at(-1)).toMatchObject({ account_id: account });
});

it("passes a service's refusal on as problem JSON with its status", async () => {
  const missing = await get(`/api/v1/products/${newId('prod')}`);
  expect(missing.status).toBe(404);
  expect(missing.headers.get('content-type')).toContain('application/problem+json');
  const refused = await get('/api/v1/products', `lk_full_${newId('k')}`);
  expect(refused.status).toBe(401);
  expect(refused.headers.get('content-type')).toContain('application/problem+json');
});

it('answers 503, not 500, while the service behind a route is away', async () => {
  await products.stop();
  const res = await get('/api/v1/products');
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
});
