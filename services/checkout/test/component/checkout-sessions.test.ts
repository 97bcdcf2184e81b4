import { AppError, newId } from '@licensing/runtime';
import type { CreateCheckoutSessionRequest } from '@licensing/proto';
import { PUBLIC_BASE_URL, startCheckout, type RunningCheckout } from './running-checkout';

// Checkout sessions over gRPC as the gateway asks for them, against real FerretDB and NATS, the product
// and licence services faked: a session is opened at its product's price with the hosted page's URL and
// checkout.created published; expiry defaults to 24 hours; what a session request may not hold is
// refused with the code the gateway turns into its status; an Idempotency-Key gives the same session;
// sessions expire on request or by the clock (checkout.expired published once, by the sweeper too) and
// stay within their account. The REST face: gateway/test/component/checkout-routes.test.ts.

let c: RunningCheckout;
const account = newId('acct');
let priced: string;

beforeAll(async () => {
  c = await startCheckout();
  priced = c.product(account, { amount: 4900, currency: 'EUR' }).id;
});

afterAll(async () => {
  await c?.stop();
});

const session = (over: Partial<CreateCheckoutSessionRequest> = {}) =>
  c.api.createSession(c.sessionRequest(account, priced, over));
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );
const checkoutEvent = (type: string, id: string) =>
  c.events.waitFor((e) => e.type === type && (e.data as { checkout: { id: string } }).checkout.id === id);

describe('checkout sessions', () => {
  it('creates an open session with the product’s price and a hosted-page URL, and publishes checkout.created', async () => {
    const created = await session({
      customer_email: 'buyer@example.com',
      cancel_url: 'https://vendor.example/cart',
      metadata: { order: '42' },
      expires_in_minutes: 60,
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^cs_[0-9A-Z]{26}$/),
      account_id: account,
      url: `${PUBLIC_BASE_URL}/checkout/${created.id}`,
      status: 'open',
      expires_at: expect.any(String),
      product_id: priced,
      amount: 4900,
      currency: 'EUR',
      customer_email: 'buyer@example.com',
      success_url: 'https://vendor.example/thanks',
      cancel_url: 'https://vendor.example/cart',
      metadata: { order: '42' },
      license_key: '',
      quantity: 1,
      subscription_id: '',
      livemode: false,
      created_at: expect.any(String),
    });
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(60 * 60_000);
    expect(await c.api.getSession({ account_id: account, id: created.id })).toEqual(created);
    await checkoutEvent('checkout.created', created.id);
  });

  it('defaults to 24 hours', async () => {
    const created = await session();
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(1440 * 60_000);
  });

  // What the service itself refuses (the gateway refuses a body of the wrong types or out of range
  // before asking: checkout-routes.test.ts runs the whole list through it).
  it.each([
    [{ product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N' }, 'not_found'],
    [{ product_id: 'nope' }, 'invalid_request'],
    [{ success_url: '' }, 'invalid_request'],
    [{ success_url: 'javascript:alert(1)' }, 'invalid_request'],
    [{ success_url: 'ftp://vendor.example/x' }, 'invalid_request'],
    [{ success_url: '/thanks' }, 'invalid_request'],
    [{ cancel_url: 'data:text/html,hi' }, 'invalid_request'],
    [{ expires_in_minutes: 29 }, 'invalid_request'],
    [{ expires_in_minutes: 1441 }, 'invalid_request'],
    [{ customer_email: 'not-an-email' }, 'invalid_request'],
    [{ metadata: { 'bad key': 'x' } }, 'invalid_request'],
    [{ metadata: { 'a.b': 'x' } }, 'invalid_request'],
    [{ metadata: { $where: 'x' } }, 'invalid_request'],
    [{ customer_email: 'a\u0000@example.com' }, 'invalid_request'],
    [{ quantity: 2 }, 'invalid_request'],
  ] as [Partial<CreateCheckoutSessionRequest>, string][])('refuses %p with %s', async (over, code) => {
    const before = (
      await c.api.listSessions({ account_id: account, status: '', page: { limit: 100, starting_after: '' } })
    ).data.length;
    const refused = await failure(session(over));
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe(code);
    const after = await c.api.listSessions({
      account_id: account,
      status: '',
      page: { limit: 100, starting_after: '' },
    });
    expect(after.data).toHaveLength(before);
  });

  it('refuses a product without a price (400, saying how to fix it) and another account’s product (404)', async () => {
    const unpriced = c.product(account, null).id;
    const noPrice = await failure(session({ product_id: unpriced }));
    expect(noPrice).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/has no price/) });
    const other = newId('acct');
    const theirs = await failure(c.api.createSession(c.sessionRequest(other, priced)));
    expect(theirs).toMatchObject({ code: 'not_found' });
  });

  it('honours Idempotency-Key: same body, same session; another body, 422', async () => {
    const a = await session({ idempotency_key: 'cart-7' });
    const b = await session({ idempotency_key: 'cart-7' });
    expect(b).toEqual(a);
    const reused = await failure(session({ customer_email: 'x@example.com', idempotency_key: 'cart-7' }));
    // The gateway answers this code with 422 (checkout-routes.test.ts).
    expect(reused).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('expires on request (not a completed one), and another account cannot see or expire it', async () => {
    const { id } = await session();
    const other = newId('acct');
    expect(await failure(c.api.getSession({ account_id: other, id }))).toMatchObject({ code: 'not_found' });
    expect(await failure(c.api.expireSession({ account_id: other, id }))).toMatchObject({ code: 'not_found' });
    expect((await c.api.expireSession({ account_id: account, id })).status).toBe('expired');
    expect((await c.api.expireSession({ account_id: account, id })).status).toBe('expired');
    await checkoutEvent('checkout.expired', id);
    // A completed one is not expired.
    const paid = await c.buy(account, priced, '4242 4242 4242 4242');
    expect(await failure(c.api.expireSession({ account_id: account, id: paid.id }))).toMatchObject({
      code: 'conflict',
    });
  });

  it('sessions past their expiry become expired and publish checkout.expired once; lists filter by status', async () => {
    const { id } = await session({ expires_in_minutes: 30 });
    c.clock.advance(31 * 60_000);
    expect((await c.api.getSession({ account_id: account, id })).status).toBe('expired');
    await checkoutEvent('checkout.expired', id);
    // A session that only the sweeper can expire (nobody reads it): once its event is out, the
    // sweeper has passed over the first one again, which must not have been published twice.
    const sentinel = (await session({ expires_in_minutes: 30 })).id;
    c.clock.advance(31 * 60_000);
    await checkoutEvent('checkout.expired', sentinel);
    expect(
      c.events
        .all()
        .filter((e) => e.type === 'checkout.expired' && (e.data as { checkout: { id: string } }).checkout.id === id),
    ).toHaveLength(1);
    const fresh = (await session()).id;
    const list = async (status: string) =>
      (await c.api.listSessions({ account_id: account, status, page: { limit: 100, starting_after: '' } })).data.map(
        (s) => s.id,
      );
    const open = await list('open');
    expect(open).toContain(fresh);
    expect(open).not.toContain(id);
    expect(await list('expired')).toContain(id);
  });
});
