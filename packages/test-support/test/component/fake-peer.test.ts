import { health, Product, ProductServiceClient, ProductServiceService } from '@licensing/proto';
import { credentials } from '@grpc/grpc-js';
import { AppError, checkHealth, createClient } from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '../../src';

// The fake peer is a real gRPC server: a component's own client (the runtime's createClient, with
// its credential) reaches it as it reaches the real service, and its errors arrive as the real
// service's would.

const product = (over: Partial<Product> = {}): Product =>
  Product.fromPartial({ id: 'prod_1', account_id: 'acct_1', name: 'Editor', ...over });

let peer: FakePeer<typeof ProductServiceService>;
let products: ReturnType<typeof createClient<ProductServiceClient>>;

beforeAll(async () => {
  peer = await startFakePeer(ProductServiceService, {
    getProduct: ({ account_id, id }) => {
      if (id !== 'prod_1') throw new AppError('not_found', `product ${id} not found`);
      return product({ account_id });
    },
  });
  products = createClient(ProductServiceClient, peer.address, { caller: 'license', token: 'unchecked' }, 3000);
});

afterAll(async () => {
  products?.close();
  await peer?.stop();
});

it('answers a faked method with what its handler returns, and records the call and its caller', async () => {
  const got = await products.call.getProduct({ account_id: 'acct_9', id: 'prod_1' });
  expect(got).toMatchObject({ id: 'prod_1', account_id: 'acct_9', name: 'Editor' });
  expect(peer.requestsTo('getProduct')).toContainEqual({ account_id: 'acct_9', id: 'prod_1' });
  expect(peer.calls.at(-1)).toMatchObject({ method: 'getProduct', caller: 'license' });
});

it("sends a handler's AppError as the real service would: the caller gets the same code and message", async () => {
  const err = await products.call.getProduct({ account_id: 'acct_1', id: 'prod_404' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ code: 'not_found', message: 'product prod_404 not found' });
});

it('answers a method the test did not fake as a replica without it would (unavailable), and lists it', async () => {
  const err = await products.call.listProducts({ account_id: 'acct_1' } as never).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'service_unavailable' });
  expect(peer.unfaked).toEqual(['listProducts']);
});

it('changes its answers while it runs (handle)', async () => {
  peer.handle({ getProduct: () => product({ name: 'Renamed' }) });
  await expect(products.call.getProduct({ account_id: 'acct_1', id: 'prod_1' })).resolves.toMatchObject({
    name: 'Renamed',
  });
});

it('answers the standard health check as a started service does, until the test says it is not serving', async () => {
  const probe = new health.HealthClient(peer.address, credentials.createInsecure());
  try {
    expect((await checkHealth(probe, 3000)).serving).toBe(true);
    peer.health.setServing(false);
    expect((await checkHealth(probe, 3000)).serving).toBe(false);
  } finally {
    peer.health.setServing(true);
    probe.close();
  }
});
