import { Product } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// The gateway alone, against real NATS and Redis, with every service it calls faked at the gRPC
// boundary: an API key is who the account service says it is, a resource is what its service answers,
// and a service that refuses or is away becomes the problem JSON a client can act on, never a 500.

const account = newId('acct');
const KEY = `lk_full_${newId('k')}`;
const editor = Product.fromPartial({ id: newId('prod'), account_id: account, name: 'Editor' });

let h: GatewayWithFakeServices;

const get = (path: string, key = KEY) => fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: {
      account: {
        authenticate: ({ secret }) => {
          if (secret !== KEY) throw new AppError('unauthorized', 'invalid API key');
          // A key made before keys had roles: no role, its scope's (full = admin).
          return {
            account: {
              id: account,
              name: 'Acme',
              plan: 'pro',
              created_at: '',
              per_minute_limit: 0,
              per_hour_limit: 0,
              support_email: '',
              require_mfa: false,
            },
            key_id: 'key_1',
            scope: 'full',
            role: '',
          };
        },
      },
      product: {
        listProducts: ({ account_id }) => ({
          data: account_id === account ? [editor] : [],
          page: { has_more: false, next_cursor: '' },
        }),
        getProduct: ({ id }) => {
          throw new AppError('not_found', `product ${id} not found`);
        },
      },
    },
  });
});

afterAll(async () => {
  await h?.stop();
});

it('answers with what the product service says, for the account the account service names', async () => {
  const res = await get('/api/v1/products');
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: Array<{ id: string; name: string }>; has_more: boolean };
  expect(body.data.map((p) => [p.id, p.name])).toEqual([[editor.id, 'Editor']]);
  expect(h.fakes.account.calls[0]).toMatchObject({
    method: 'authenticate',
    caller: 'gateway',
    request: { secret: KEY },
  });
  expect(h.fakes.product.requestsTo('listProducts').at(-1)).toMatchObject({ account_id: account });
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
  await h.stopService('product');
  const res = await get('/api/v1/products');
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
});
