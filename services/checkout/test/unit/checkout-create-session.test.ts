import { checkoutHandlers } from '../../src/handlers/checkout-handlers';
import { checkNewSession, createSession } from '../../src/use-cases/create-session';
import { refusal } from '../../../../test/support/fakes/common';
import { BASE_URL, checkoutSetup, priced } from '../../../../test/support/fakes/checkout-deps';
import { FakeProvider } from '../../../../test/support/fakes/checkout-peers';
import { FakeSubscriptionEmails } from '../../../../test/support/fakes/checkout-store';

const PRODUCT = priced().id;
const request = (over: Record<string, unknown> = {}) => ({
  account_id: 'acct_A',
  product_id: PRODUCT,
  customer_email: '',
  success_url: 'https://vendor.example/thanks',
  cancel_url: '',
  metadata: {},
  expires_in_minutes: 0,
  idempotency_key: '',
  ...over,
});
const ctx = { requestId: 'req_7', caller: 'gateway' as const, log: undefined as never };

describe('checking a new checkout session', () => {
  it('gives the checked input, expiring after 24 hours unless told otherwise', () => {
    expect(checkNewSession(request({ customer_email: 'buyer@example.com', metadata: { order: '42' } }), false)).toEqual(
      {
        product_id: PRODUCT,
        customer_email: 'buyer@example.com',
        success_url: 'https://vendor.example/thanks',
        cancel_url: '',
        metadata: { order: '42' },
        minutes: 1440,
        quantity: 0,
      },
    );
  });

  it.each([
    ['a product id that is not one', { product_id: 'nope' }, 'product_id'],
    ['a malformed e-mail', { customer_email: 'not-an-email' }, 'customer_email'],
    ['no success_url', { success_url: '' }, 'success_url'],
    ['a javascript: success_url', { success_url: 'javascript:alert(1)' }, 'success_url'],
    ['a relative cancel_url', { cancel_url: '/back' }, 'cancel_url'],
    ['a metadata key with spaces', { metadata: { 'my key': 'x' } }, 'metadata.my key'],
    ['a metadata key with a dot', { metadata: { 'a.b': 'x' } }, 'metadata.a.b'],
    ['a metadata key that starts with $', { metadata: { $gt: 'x' } }, 'metadata.$gt'],
    ['a metadata value with a control character', { metadata: { note: 'a\u001bb' } }, 'metadata.note'],
    ['an expiry under 30 minutes', { expires_in_minutes: 10 }, 'expires_in_minutes'],
    ['an expiry over 24 hours', { expires_in_minutes: 1441 }, 'expires_in_minutes'],
  ])('refuses %s', (_what, over, field) => {
    let err: { code?: string; fieldErrors?: { field: string }[] } = {};
    try {
      checkNewSession(request(over), false);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors![0].field).toBe(field);
  });

  it('refuses http redirect URLs only in production', () => {
    expect(() => checkNewSession(request({ success_url: 'http://vendor.example/thanks' }), true)).toThrow(
      'success_url must be an https URL',
    );
    expect(checkNewSession(request({ success_url: 'http://vendor.example/thanks' }), false).success_url).toBe(
      'http://vendor.example/thanks',
    );
  });
});

describe('creating a checkout session', () => {
  it("stores an open session at the product's price, expiring after the minutes given", async () => {
    const { store, clock, deps, product } = checkoutSetup();
    const s = await createSession(deps, 'acct_A', checkNewSession(request({ expires_in_minutes: 30 }), false), 'req_1');
    expect(s).toMatchObject({
      account_id: 'acct_A',
      product_id: product.id,
      product_name: 'Editor',
      status: 'open',
      amount: 4900,
      currency: 'EUR',
      created_at: clock.now(),
      license_key: null,
      provider: 'test',
      refund_action: 'revoke',
    });
    expect(s.expires_at).toEqual(new Date(clock.now().getTime() + 30 * 60_000));
    expect(store.sessions.get(s._id)).toEqual(s);
  });

  it('records checkout.created with the session and hands it to the outbox', async () => {
    const { store, outbox, deps } = checkoutSetup();
    const s = await createSession(deps, 'acct_A', checkNewSession(request(), false), 'req_1');
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({
      type: 'checkout.created',
      account_id: 'acct_A',
      data: { checkout: { id: s._id, status: 'open', amount: 4900 } },
    });
    expect(outbox.flushed).toEqual([{ model: 'CheckoutSession', id: s._id }]);
  });

  it("asks the product service as the caller's request, and starts the provider with the hosted page", async () => {
    const { products, provider, deps } = checkoutSetup();
    const s = await createSession(
      deps,
      'acct_A',
      checkNewSession(request({ customer_email: 'b@example.com' }), false),
      'req_9',
    );
    expect(products.calls).toEqual([{ req: { account_id: 'acct_A', id: PRODUCT }, opts: { requestId: 'req_9' } }]);
    expect(provider.started).toEqual([
      expect.objectContaining({
        sessionId: s._id,
        amount: 4900,
        currency: 'EUR',
        customerEmail: 'b@example.com',
        hostedPageUrl: `${BASE_URL}/checkout/${s._id}`,
      }),
    ]);
    expect(s.provider_url).toBe(`${BASE_URL}/checkout/${s._id}`);
  });

  it("keeps the provider's session and the product's refund action", async () => {
    const { products, deps } = checkoutSetup(new FakeProvider('stripe'));
    products.products.set(
      PRODUCT,
      priced({
        policy: {
          grace_days: 0,
          require_activation: false,
          validate_keys_see_email: false,
          refund_action: 'suspend',
          entitlements: [],
          expiration_strategy: 'restrict',
        },
      }),
    );
    const s = await createSession(deps, 'acct_A', checkNewSession(request(), false), '');
    expect(s).toMatchObject({
      provider: 'stripe',
      provider_session_id: `cs_test_${s._id}`,
      provider_url: `https://pay.example/${s._id}`,
      refund_action: 'suspend',
    });
  });

  it('refuses a product without a price before the provider is asked', async () => {
    const { store, products, provider, outbox, deps } = checkoutSetup();
    products.products.set(PRODUCT, priced({ price: undefined }));
    const err = await refusal(() => createSession(deps, 'acct_A', checkNewSession(request(), false), ''));
    expect(err).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('this product has no price'),
    });
    expect(provider.started).toEqual([]);
    expect(store.sessions.size).toBe(0);
    expect(outbox.flushed).toEqual([]);
  });

  it("answers not found for another account's product, storing nothing", async () => {
    const { store, deps } = checkoutSetup();
    expect((await refusal(() => createSession(deps, 'acct_B', checkNewSession(request(), false), ''))).code).toBe(
      'not_found',
    );
    expect(store.sessions.size).toBe(0);
  });

  it('stores nothing when the provider cannot start the payment', async () => {
    const { store, provider, deps } = checkoutSetup();
    provider.startFailure = new Error('provider down');
    await expect(createSession(deps, 'acct_A', checkNewSession(request(), false), '')).rejects.toThrow('provider down');
    expect(store.sessions.size).toBe(0);
    expect(store.events).toEqual([]);
  });
});

describe('the createSession handler', () => {
  it('answers the session in the contract, its URL the hosted page', async () => {
    const { clock, deps } = checkoutSetup();
    const s = await checkoutHandlers(deps, false, new FakeSubscriptionEmails()).createSession(
      request({ metadata: { a: 'b' } }),
      ctx,
    );
    expect(s).toEqual({
      id: expect.stringMatching(/^cs_/),
      account_id: 'acct_A',
      product_id: PRODUCT,
      status: 'open',
      amount: 4900,
      currency: 'EUR',
      customer_email: '',
      success_url: 'https://vendor.example/thanks',
      cancel_url: '',
      metadata: { a: 'b' },
      url: `${BASE_URL}/checkout/${s.id}`,
      expires_at: new Date(clock.now().getTime() + 1440 * 60_000).toISOString(),
      created_at: clock.now().toISOString(),
      license_key: '',
      livemode: false,
      quantity: 1,
      subscription_id: '',
    });
  });

  it('with an Idempotency-Key answers a repeat with the first session, and refuses the key with another request', async () => {
    const { store, deps } = checkoutSetup();
    const h = checkoutHandlers(deps, false, new FakeSubscriptionEmails());
    const first = await h.createSession(request({ idempotency_key: 'k1' }), ctx);
    const again = await h.createSession(request({ idempotency_key: 'k1' }), ctx);
    expect(again).toEqual(first);
    expect(store.sessions.size).toBe(1);
    expect(
      await refusal(() => h.createSession(request({ idempotency_key: 'k1', expires_in_minutes: 60 }), ctx)),
    ).toMatchObject({ code: 'idempotency_key_reused' });
    expect(store.sessions.size).toBe(1);
  });

  it('a retry of a key whose run stored the session and then failed answers with that session: one session, one provider id', async () => {
    const { store, provider, deps } = checkoutSetup();
    const h = checkoutHandlers(deps, false, new FakeSubscriptionEmails());
    const insert = store.insert.bind(store);
    // The write lands but its answer is lost (the store went away just after).
    store.insert = async (doc, events) => {
      await insert(doc, events);
      store.insert = insert;
      throw new Error('connection lost after the write');
    };
    await expect(h.createSession(request({ idempotency_key: 'k3' }), ctx)).rejects.toThrow('connection lost');
    const retried = await h.createSession(request({ idempotency_key: 'k3' }), ctx);
    expect(store.sessions.size).toBe(1);
    expect(retried.id).toBe([...store.sessions.keys()][0]);
    expect(new Set(provider.started.map((p) => p.sessionId))).toEqual(new Set([retried.id]));
  });

  it('forgets a key whose request failed, so it may be retried', async () => {
    const { store, provider, deps } = checkoutSetup();
    const h = checkoutHandlers(deps, false, new FakeSubscriptionEmails());
    provider.startFailure = new Error('provider down');
    await expect(h.createSession(request({ idempotency_key: 'k2' }), ctx)).rejects.toThrow('provider down');
    provider.startFailure = undefined;
    await expect(h.createSession(request({ idempotency_key: 'k2' }), ctx)).resolves.toMatchObject({ status: 'open' });
    expect(store.sessions.size).toBe(1);
  });
});
