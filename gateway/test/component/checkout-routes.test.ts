import type { CheckoutSession, Product } from '@licensing/proto';
import { client } from '../../../test/support/stack';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import { CHECKOUT_BASE_URL, checkoutSessionHandlers, pricedProductHandlers } from './fake-checkout-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// The REST face of prices and checkout sessions: the gateway turns /api/v1/products prices and
// /api/v1/checkout into the product and checkout services' calls (faked here, judging by those
// services' own rules: fake-checkout-answers.ts), refuses what it cannot pass on before asking, and
// answers with the API's statuses and shapes (201 with Location, nulls for what is not set, 404 for
// another account's, 422 for a reused Idempotency-Key). What the checkout service itself does with
// these calls (its events, expiry by the clock): services/checkout/test/component/checkout-sessions.test.ts.

const vendor = fakeVendor('enterprise');
const stranger = fakeVendor('enterprise');
const products: Product[] = [];
const sessions: CheckoutSession[] = [];
let h: GatewayWithFakeServices;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
let priced: string;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: {
      account: accountHandlers([vendor, stranger]),
      product: pricedProductHandlers(products),
      checkout: checkoutSessionHandlers(products, sessions),
    },
  });
  api = client(h.url, vendor.apiKey);
  other = client(h.url, stranger.apiKey);
  priced = (await api('POST', '/api/v1/products', { name: 'Sellable', price: { amount: 4900, currency: 'eur' } })).body
    .id;
});

afterAll(async () => {
  await h?.stop();
});

const session = (over: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  api(
    'POST',
    '/api/v1/checkout',
    { product_id: priced, success_url: 'https://vendor.example/thanks', ...over },
    headers,
  );

describe('prices on products', () => {
  it('are set, read, changed and removed; bad prices are 400', async () => {
    expect((await api('GET', `/api/v1/products/${priced}`)).body.price).toEqual({
      amount: 4900,
      currency: 'EUR',
      interval: null,
      interval_count: null,
      trial_days: 0,
    });
    const id = (await api('POST', '/api/v1/products', { name: 'Free for now' })).body.id;
    expect((await api('GET', `/api/v1/products/${id}`)).body.price).toBeNull();
    expect(
      (await api('PATCH', `/api/v1/products/${id}`, { price: { amount: 999, currency: 'USD' } })).body.price,
    ).toEqual({ amount: 999, currency: 'USD', interval: null, interval_count: null, trial_days: 0 });
    expect((await api('PATCH', `/api/v1/products/${id}`, { price: null })).body.price).toBeNull();
    for (const price of [
      { amount: 0, currency: 'EUR' },
      { amount: 10.5, currency: 'EUR' },
      { amount: 100, currency: 'EURO' },
      { amount: 100, currency: 'XYZ' },
      { amount: 100 },
      { amount: '100', currency: 'EUR' },
    ]) {
      const res = await api('POST', '/api/v1/products', { name: 'Bad price', price });
      expect({ price, status: res.status }).toEqual({ price, status: 400 });
    }
  });
});

describe('checkout sessions', () => {
  it('creates an open session with the product’s price and a hosted-page URL, and publishes checkout.created', async () => {
    const res = await session({
      customer_email: 'buyer@example.com',
      cancel_url: 'https://vendor.example/cart',
      metadata: { order: '42' },
      expires_in_minutes: 60,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^cs_[0-9A-Z]{26}$/),
      url: `${CHECKOUT_BASE_URL}/checkout/${res.body.id}`,
      status: 'open',
      expires_at: expect.any(String),
      product_id: priced,
      amount: 4900,
      currency: 'EUR',
      customer_email: 'buyer@example.com',
      success_url: 'https://vendor.example/thanks',
      cancel_url: 'https://vendor.example/cart',
      metadata: { order: '42' },
      license_key: null,
      quantity: 1,
      subscription_id: null,
      livemode: false,
      created_at: expect.any(String),
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(60 * 60_000);
    expect(res.headers.get('location')).toBe(`/api/v1/checkout/${res.body.id}`);
    expect((await api('GET', `/api/v1/checkout/${res.body.id}`)).body).toEqual(res.body);
    // The event is the checkout service's: its component test waits for it.
    expect(h.fakes.checkout.requestsTo('createSession').at(-1)).toMatchObject({
      account_id: vendor.account.id,
      product_id: priced,
      expires_in_minutes: 60,
    });
  });

  it('defaults to 24 hours', async () => {
    const res = await session();
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(1440 * 60_000);
  });

  it.each([
    [{ product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N' }, 404, 'not_found'],
    [{ product_id: 'nope' }, 400, 'invalid_request'],
    [{ success_url: undefined }, 400, 'invalid_request'],
    [{ success_url: 'javascript:alert(1)' }, 400, 'invalid_request'],
    [{ success_url: 'ftp://vendor.example/x' }, 400, 'invalid_request'],
    [{ success_url: '/thanks' }, 400, 'invalid_request'],
    [{ cancel_url: 'data:text/html,hi' }, 400, 'invalid_request'],
    [{ expires_in_minutes: 29 }, 400, 'invalid_request'],
    [{ expires_in_minutes: 1441 }, 400, 'invalid_request'],
    [{ expires_in_minutes: 0 }, 400, 'invalid_request'],
    [{ expires_in_minutes: '60' }, 400, 'invalid_request'],
    [{ customer_email: 'not-an-email' }, 400, 'invalid_request'],
    [{ metadata: { 'bad key': 'x' } }, 400, 'invalid_request'],
    [{ metadata: { 'a.b': 'x' } }, 400, 'invalid_request'],
    [{ metadata: { $where: 'x' } }, 400, 'invalid_request'],
    [{ customer_email: 'a\u0000@example.com' }, 400, 'invalid_request'],
    [{ quantity: 2 }, 400, 'invalid_request'],
  ])('refuses %p with %i', async (over, status, code) => {
    const res = await session(over);
    expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  });

  it('refuses a product without a price (400, saying how to fix it) and another account’s product (404)', async () => {
    const unpriced = (await api('POST', '/api/v1/products', { name: 'No price' })).body.id;
    const res = await session({ product_id: unpriced });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/has no price/);
    expect(
      (await other('POST', '/api/v1/checkout', { product_id: priced, success_url: 'https://x.example/' })).status,
    ).toBe(404);
  });

  it('honours Idempotency-Key: same body, same session; another body, 422', async () => {
    const a = await session({}, { 'idempotency-key': 'cart-7' });
    const b = await session({}, { 'idempotency-key': 'cart-7' });
    expect(b.body).toEqual(a.body);
    expect((await session({ customer_email: 'x@example.com' }, { 'idempotency-key': 'cart-7' })).status).toBe(422);
  });

  it('expires on request (not a completed one), and another account cannot see or expire it', async () => {
    const { id } = (await session()).body;
    expect((await other('GET', `/api/v1/checkout/${id}`)).status).toBe(404);
    expect((await other('POST', `/api/v1/checkout/${id}/expire`)).status).toBe(404);
    const expired = await api('POST', `/api/v1/checkout/${id}/expire`);
    expect(expired.body.status).toBe('expired');
    expect((await api('POST', `/api/v1/checkout/${id}/expire`)).body.status).toBe('expired');
    expect((await api('GET', '/api/v1/checkout/cs_nope')).status).toBe(400);
  });

  it('lists filter by status (a session past its expiry is expired: the checkout service says so)', async () => {
    const { id } = (await session()).body;
    await api('POST', `/api/v1/checkout/${id}/expire`);
    const fresh = (await session()).body.id;
    const open = (await api('GET', '/api/v1/checkout?status=open')).body.data.map((s: { id: string }) => s.id);
    expect(open).toContain(fresh);
    expect(open).not.toContain(id);
    expect(h.fakes.checkout.requestsTo('listSessions').at(-1)).toMatchObject({ status: 'open' });
    expect((await api('GET', '/api/v1/checkout?status=expired')).body.data.map((s: { id: string }) => s.id)).toContain(
      id,
    );
    expect((await api('GET', '/api/v1/checkout?status=paid')).status).toBe(400);
  });

  it('status reports the checkout service', async () => {
    expect((await api('GET', '/api/v1/status')).body.services.checkout).toEqual({
      status: 'ok',
      latency_ms: expect.any(Number),
    });
  });
});

describe('bad input: a clear 4xx, nothing written', () => {
  it('refuses bad recurring prices', async () => {
    const before = (await api('GET', '/api/v1/products?limit=100')).body.data.length;
    for (const price of [
      { interval: 'month' },
      { amount: 100, currency: 'EUR', interval: 'week' },
      { amount: 100, currency: 'EUR', interval: 'month', trial_days: 366 },
      { amount: 100, currency: 'EUR', interval: 'month', interval_count: 13 },
      { amount: 100, currency: 'EUR', interval: 'month', interval_count: 0 },
      { amount: 100, currency: 'EUR', trial_days: 7 },
      { amount: 100, currency: 'EUR', interval: null, interval_count: 2 },
    ]) {
      const res = await api('POST', '/api/v1/products', { name: 'Bad', price });
      expect({ price, status: res.status, code: res.body.code }).toEqual({
        price,
        status: 400,
        code: 'invalid_request',
      });
    }
    for (const policy of [{ payment_grace_days: 61 }, { payment_grace_days: -1 }]) {
      const res = await api('POST', '/api/v1/products', { name: 'Bad', policy });
      expect({ policy, status: res.status }).toEqual({ policy, status: 400 });
    }
    expect((await api('GET', '/api/v1/products?limit=100')).body.data.length).toBe(before);
    const oneTime = await api('POST', '/api/v1/products', {
      name: 'Once',
      price: { amount: 100, currency: 'EUR', interval: null },
    });
    expect(oneTime.body.price).toEqual({
      amount: 100,
      currency: 'EUR',
      interval: null,
      interval_count: null,
      trial_days: 0,
    });
  });

  it('refuses a quantity out of range, or on a one-time price', async () => {
    const monthly = (
      await api('POST', '/api/v1/products', {
        name: 'Monthly',
        price: { amount: 1000, currency: 'EUR', interval: 'month' },
      })
    ).body.id;
    const oneTime = (await api('POST', '/api/v1/products', { name: 'Once', price: { amount: 100, currency: 'EUR' } }))
      .body.id;
    const before = (await api('GET', '/api/v1/checkout?limit=100')).body.data.length;
    for (const [product, quantity] of [
      [monthly, 0],
      [monthly, 1001],
      [monthly, 1.5],
      [monthly, '2'],
      [oneTime, 2],
    ] as const) {
      const res = await api('POST', '/api/v1/checkout', {
        product_id: product,
        success_url: 'https://vendor.example/thanks',
        quantity,
      });
      expect({ quantity, status: res.status, code: res.body.code }).toEqual({
        quantity,
        status: 400,
        code: 'invalid_request',
      });
    }
    expect((await api('GET', '/api/v1/checkout?limit=100')).body.data.length).toBe(before);
  });
});
