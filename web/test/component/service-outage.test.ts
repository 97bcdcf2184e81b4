import { Product, policyToContract, withPolicyDefaults } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import { WebClient } from '../../../test/support/web-client';
import { fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// A dashboard page while a service it needs is away: the web component says so with 503 and
// Retry-After, as the API does (the gateway's side: gateway/test/component/errors-and-status.test.ts).

const owner = fakeOwner();
let h: WebWithFakeServices;

beforeAll(async () => {
  // A product with the default policy, as the product service keeps it.
  const products = [
    Product.fromPartial({
      id: newId('prod'),
      account_id: owner.account.id,
      name: 'Shown',
      created_at: new Date().toISOString(),
      policy: policyToContract(withPolicyDefaults(undefined)),
    }),
  ];
  h = await startWebWithFakeServices({
    handlers: {
      account: sessionHandlers([owner]),
      product: {
        listProducts: ({ account_id }) => ({
          data: products.filter((p) => p.account_id === account_id),
          page: { has_more: false, next_cursor: '' },
        }),
      },
    },
  });
});

afterAll(async () => {
  await h?.stop();
});

describe('unavailable services', () => {
  it("the dashboard's page says a service is down with 503 and Retry-After, as the API does", async () => {
    const web = new WebClient(h.url);
    expect((await web.signIn(owner.user.email, owner.password)).status).toBe(303);
    const before = await web.get('/dashboard/products');
    expect([before.status, before.html]).toEqual([200, expect.stringContaining('Shown')]);
    await h.stopService('product');
    try {
      const page = await web.get('/dashboard/products');
      expect(page.status).toBe(503);
      expect(page.headers.get('retry-after')).toBe('5');
    } finally {
      await h.restartService('product');
    }
  });
});
