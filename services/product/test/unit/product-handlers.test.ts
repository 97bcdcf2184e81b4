import { productHandlers } from '../../src/handlers/product-handlers';
import { FakeClock, RecordingOutbox, modelToken, refusal } from '../../../../test/support/fakes/common';
import { FakeProductStore, FakeSigningKeyStore } from '../../../../test/support/fakes/product-stores';

const ctx = { requestId: 'req_1', caller: 'gateway' as const, log: undefined as never };

const setup = () => {
  const store = new FakeProductStore();
  const clock = new FakeClock();
  const handlers = productHandlers({
    store,
    outbox: new RecordingOutbox(),
    clock,
    releases: { hasAtLeast: async () => false },
    keys: new FakeSigningKeyStore(),
    deletions: { Deletion: modelToken('ProductDeletion'), insert: async () => true },
    licenses: { hasLicenses: async () => ({ has_licenses: false }) },
  });
  return { store, clock, handlers };
};

const create = (accountId: string, name: string) => ({
  account_id: accountId,
  name,
  description: '',
  policy: undefined,
  price: undefined,
});

describe('product handlers', () => {
  it('answer a created product in the contract: ISO time, policy in contract form, no price', async () => {
    const { clock, handlers } = setup();
    const p = await handlers.createProduct(create('acct_A', 'Editor'), ctx);
    expect(p).toEqual({
      id: expect.stringMatching(/^prod_/),
      account_id: 'acct_A',
      name: 'Editor',
      description: '',
      created_at: clock.now().toISOString(),
      policy: {
        duration_days: undefined,
        max_activations: undefined,
        grace_days: 0,
        require_activation: false,
        validate_keys_see_email: false,
        refund_action: 'revoke',
        entitlements: [],
        customer_deactivations_per_30_days: 3,
        payment_grace_days: 7,
        max_file_ttl_days: 30,
        expiration_strategy: 'restrict',
      },
      price: undefined,
      email_on_purchase: true,
      archived_at: undefined,
    });
  });

  it('answer the price given on update', async () => {
    const { handlers } = setup();
    const p = await handlers.createProduct(create('acct_A', 'Editor'), ctx);
    const updated = await handlers.updateProduct(
      {
        account_id: 'acct_A',
        id: p.id,
        policy: undefined,
        price: { amount: 990, currency: 'chf' },
        remove_price: false,
      },
      ctx,
    );
    expect(updated.price).toEqual({ amount: 990, currency: 'CHF' });
  });

  it('read a product stored before policies existed as the default policy', async () => {
    const { store, handlers } = setup();
    await store.insert(
      {
        _id: 'prod_old',
        account_id: 'acct_A',
        name: 'Old',
        description: '',
        policy: undefined as never,
        price: null,
        created_at: new Date(0),
      },
      [],
    );
    expect((await handlers.getProduct({ account_id: 'acct_A', id: 'prod_old' }, ctx)).policy).toMatchObject({
      refund_action: 'revoke',
      grace_days: 0,
    });
  });

  it("get another account's product as not found", async () => {
    const { handlers } = setup();
    const p = await handlers.createProduct(create('acct_A', 'Editor'), ctx);
    expect((await refusal(() => handlers.getProduct({ account_id: 'acct_B', id: p.id }, ctx))).code).toBe('not_found');
  });

  it("list only the account's products, newest first, a page at a time", async () => {
    const { handlers } = setup();
    const made = [];
    for (const name of ['a', 'b', 'c']) made.push(await handlers.createProduct(create('acct_A', name), ctx));
    await handlers.createProduct(create('acct_B', 'other'), ctx);
    const first = await handlers.listProducts({ account_id: 'acct_A', page: { limit: 2, starting_after: '' } }, ctx);
    expect(first.data.map((p) => p.name)).toEqual(['c', 'b']);
    expect(first.page).toEqual({ has_more: true, next_cursor: made[1].id });
    const second = await handlers.listProducts(
      { account_id: 'acct_A', page: { limit: 2, starting_after: first.page!.next_cursor } },
      ctx,
    );
    expect(second.data.map((p) => p.name)).toEqual(['a']);
    expect(second.page!.has_more).toBe(false);
  });
});
