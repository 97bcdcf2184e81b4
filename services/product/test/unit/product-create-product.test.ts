import { DEFAULT_POLICY } from '@licensing/proto';
import { createProduct } from '../../src/use-cases/create-product';
import { FakeClock, RecordingOutbox, refusal } from '../../../../test/support/fakes/common';
import { FakeProductStore } from '../../../../test/support/fakes/product-stores';

const setup = () => {
  const store = new FakeProductStore();
  const outbox = new RecordingOutbox();
  const clock = new FakeClock();
  return { store, outbox, clock, deps: { store, outbox, clock } };
};

const request = (over: Record<string, unknown> = {}) => ({
  account_id: 'acct_A',
  name: 'Editor',
  description: '',
  policy: undefined,
  price: undefined,
  ...over,
});

describe('creating a product', () => {
  it('stores the product of the account with trimmed text, the default policy, no price and the clock time', async () => {
    const { store, clock, deps } = setup();
    const doc = await createProduct(deps, request({ name: '  Editor Pro ', description: ' fast ' }));
    expect(doc).toMatchObject({
      account_id: 'acct_A',
      name: 'Editor Pro',
      description: 'fast',
      policy: DEFAULT_POLICY,
      price: null,
    });
    expect(doc._id).toMatch(/^prod_/);
    expect(doc.created_at).toEqual(clock.now());
    expect(store.docs.get(doc._id)).toEqual(doc);
  });

  it('records product.created in the same write, then hands it to the outbox', async () => {
    const { store, outbox, deps } = setup();
    const doc = await createProduct(deps, request());
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({
      type: 'product.created',
      account_id: 'acct_A',
      created_at: doc.created_at.toISOString(),
      data: { product: { id: doc._id, name: 'Editor' } },
    });
    expect(outbox.flushed).toEqual([{ model: 'Product', id: doc._id }]);
  });

  it('stores a checked policy and a price with its currency in capitals', async () => {
    const { deps } = setup();
    const doc = await createProduct(
      deps,
      request({
        policy: {
          duration_days: 365,
          max_activations: 3,
          grace_days: 7,
          require_activation: true,
          validate_keys_see_email: false,
          refund_action: 'suspend',
        },
        price: { amount: 4900, currency: 'eur' },
      }),
    );
    expect(doc.policy).toEqual({
      duration_days: 365,
      max_activations: 3,
      grace_days: 7,
      require_activation: true,
      validate_keys_see_email: false,
      refund_action: 'suspend',
      lease_seconds: null,
      customer_deactivations_per_30_days: 3,
      entitlements: [],
      payment_grace_days: 7,
      max_file_ttl_days: 30,
      expiration_strategy: 'restrict',
    });
    expect(doc.price).toEqual({ amount: 4900, currency: 'EUR' });
  });

  it.each([
    ['an empty name', { name: '   ' }, 'name'],
    ['a name over 200 characters', { name: 'x'.repeat(201) }, 'name'],
    ['a description over 2000 characters', { description: 'x'.repeat(2001) }, 'description'],
    [
      'max_activations of 0',
      {
        policy: {
          max_activations: 0,
          grace_days: 0,
          require_activation: false,
          validate_keys_see_email: false,
          refund_action: '',
        },
      },
      'policy.max_activations',
    ],
    [
      'grace days on a licence that never expires',
      { policy: { grace_days: 3, require_activation: false, validate_keys_see_email: false, refund_action: '' } },
      'policy.grace_days',
    ],
    [
      'an unknown refund action',
      { policy: { grace_days: 0, require_activation: false, validate_keys_see_email: false, refund_action: 'refund' } },
      'policy.refund_action',
    ],
    ['a price of 0', { price: { amount: 0, currency: 'EUR' } }, 'price.amount'],
    ['a fractional price', { price: { amount: 9.5, currency: 'EUR' } }, 'price.amount'],
    ['an unknown currency', { price: { amount: 100, currency: 'XYZ' } }, 'price.currency'],
  ])('refuses %s, storing and publishing nothing', async (_what, over, field) => {
    const { store, outbox, deps } = setup();
    const err = await refusal(() => createProduct(deps, request(over)));
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors.map((f) => f.field)).toEqual([field]);
    expect(store.docs.size).toBe(0);
    expect(store.events).toEqual([]);
    expect(outbox.flushed).toEqual([]);
  });
});

describe('the products of one account', () => {
  it('are at most 1,000: one more is 409, naming the bound, and another account is not held up', async () => {
    const { store, outbox, deps } = setup();
    for (let i = 0; i < 999; i++) await createProduct(deps, request({ name: `Product ${i}` }));
    // The 1,000th is taken.
    await createProduct(deps, request({ name: 'The last one' }));
    const err = await refusal(() => createProduct(deps, request({ name: 'One too many' })));
    expect(err).toMatchObject({
      code: 'conflict',
      message:
        'this account has 1000 products, the most an account may have: reuse one (an existing product can be renamed and its policy changed)',
    });
    expect(store.docs.size).toBe(1000);
    expect(outbox.flushed).toHaveLength(1000);
    await expect(createProduct(deps, request({ account_id: 'acct_B', name: 'Elsewhere' }))).resolves.toMatchObject({
      account_id: 'acct_B',
    });
  });
});
