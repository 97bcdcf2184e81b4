import { createProduct } from '../../src/use-cases/create-product';
import { updateProduct } from '../../src/use-cases/update-product';
import { FakeClock, RecordingOutbox, refusal } from '../../../../test/support/fakes/common';
import { FakeProductStore } from '../../../../test/support/fakes/product-stores';

async function setup() {
  const store = new FakeProductStore();
  const outbox = new RecordingOutbox();
  const clock = new FakeClock();
  const deps = { store, outbox, clock };
  const product = await createProduct(deps, {
    account_id: 'acct_A',
    name: 'Editor',
    description: 'old',
    policy: undefined,
    price: { amount: 1000, currency: 'USD' },
  });
  store.events.length = 0;
  outbox.flushed.length = 0;
  return { store, outbox, clock, deps, product };
}

const change = (id: string, over: Record<string, unknown> = {}) => ({
  account_id: 'acct_A',
  id,
  policy: undefined,
  price: undefined,
  remove_price: false,
  ...over,
});

describe('updating a product', () => {
  it('changes what is given and keeps the rest', async () => {
    const { store, deps, product } = await setup();
    const after = await updateProduct(deps, change(product._id, { description: ' new ' }));
    expect(after).toMatchObject({ name: 'Editor', description: 'new', price: { amount: 1000, currency: 'USD' } });
    expect(store.docs.get(product._id)!.description).toBe('new');
  });

  it('records product.updated at the time of the change and hands it to the outbox', async () => {
    const { store, outbox, clock, deps, product } = await setup();
    clock.advance(60_000);
    await updateProduct(deps, change(product._id, { name: 'Editor 2' }));
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({
      type: 'product.updated',
      account_id: 'acct_A',
      created_at: clock.now().toISOString(),
      data: { product: { id: product._id, name: 'Editor 2' } },
    });
    expect(outbox.flushed).toEqual([{ model: 'Product', id: product._id }]);
  });

  it('replaces the price, or removes it with removePrice', async () => {
    const { deps, product } = await setup();
    expect(
      (await updateProduct(deps, change(product._id, { price: { amount: 2500, currency: 'gbp' } }))).price,
    ).toEqual({ amount: 2500, currency: 'GBP' });
    expect((await updateProduct(deps, change(product._id, { remove_price: true }))).price).toBeNull();
  });

  it('replaces the policy only when one is given', async () => {
    const { deps, product } = await setup();
    const before = (await updateProduct(deps, change(product._id))).policy;
    const after = await updateProduct(
      deps,
      change(product._id, {
        policy: {
          max_activations: 2,
          grace_days: 0,
          require_activation: true,
          validate_keys_see_email: true,
          refund_action: 'suspend',
        },
      }),
    );
    expect(before.max_activations).toBeNull();
    expect(after.policy).toMatchObject({
      max_activations: 2,
      require_activation: true,
      validate_keys_see_email: true,
      refund_action: 'suspend',
    });
  });

  it('refuses a price together with removePrice, changing nothing', async () => {
    const { store, outbox, deps, product } = await setup();
    const err = await refusal(() =>
      updateProduct(deps, change(product._id, { price: { amount: 1, currency: 'EUR' }, remove_price: true })),
    );
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors[0].field).toBe('price');
    expect(store.docs.get(product._id)!.price).toEqual({ amount: 1000, currency: 'USD' });
    expect(store.events).toEqual([]);
    expect(outbox.flushed).toEqual([]);
  });

  it('refuses a blank new name', async () => {
    const { deps, product } = await setup();
    const err = await refusal(() => updateProduct(deps, change(product._id, { name: '  ' })));
    expect(err.fieldErrors[0].field).toBe('name');
  });

  it.each([
    ['an unknown id', 'acct_A', 'prod_missing'],
    ['another account', 'acct_B', undefined],
  ])('answers not found for %s and changes nothing', async (_what, accountId, id) => {
    const { store, outbox, deps, product } = await setup();
    const err = await refusal(() =>
      updateProduct(deps, { ...change(id ?? product._id, { name: 'Taken' }), account_id: accountId }),
    );
    expect(err).toMatchObject({ code: 'not_found', message: 'product not found' });
    expect(store.docs.get(product._id)!.name).toBe('Editor');
    expect(outbox.flushed).toEqual([]);
  });

  it('answers not found when the product goes between the read and the write, publishing nothing', async () => {
    const { store, outbox, deps, product } = await setup();
    store.vanishBeforeWrite = true;
    expect((await refusal(() => updateProduct(deps, change(product._id, { name: 'X' })))).code).toBe('not_found');
    expect(outbox.flushed).toEqual([]);
  });
});
