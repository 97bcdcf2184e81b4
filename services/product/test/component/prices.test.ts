import { CreateProductRequest, UpdateProductRequest, type Price } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { testTopology } from '../../../../test/support/stack';
import { useProductService } from './running-product';

// Prices on products, in the product service alone over gRPC as the gateway sends them, against real
// FerretDB and NATS: a price is stored (its currency in capitals), read back, changed and removed; a
// price or payment grace the service cannot sell with is refused naming the field, and nothing is
// written. The gateway's REST face of these (nulls for a one-time price, the 400s it gives before
// asking): gateway/test/component/checkout-routes.test.ts.

const t = testTopology();
const run = useProductService(t);
const account_id = newId('acct');
const NO_PAGE = { limit: 100, starting_after: '' };
const create = (fields: Partial<CreateProductRequest>) =>
  run.products.call.createProduct(CreateProductRequest.fromPartial({ account_id, ...fields }));
const count = async () => (await run.products.call.listProducts({ account_id, page: NO_PAGE })).data.length;

describe('prices on products', () => {
  it('are set, read, changed and removed; bad prices are 400', async () => {
    const priced = await create({ name: 'Sellable', price: { amount: 4900, currency: 'eur' } });
    expect((await run.products.call.getProduct({ account_id, id: priced.id })).price).toEqual({
      amount: 4900,
      currency: 'EUR',
    });
    const free = await create({ name: 'Free for now' });
    expect(free.price).toBeUndefined();
    const update = (fields: Partial<UpdateProductRequest>) =>
      run.products.call.updateProduct(UpdateProductRequest.fromPartial({ account_id, id: free.id, ...fields }));
    expect((await update({ price: { amount: 999, currency: 'USD' } })).price).toEqual({ amount: 999, currency: 'USD' });
    expect((await run.products.call.getProduct({ account_id, id: free.id })).price).toEqual({
      amount: 999,
      currency: 'USD',
    });
    expect((await update({ remove_price: true })).price).toBeUndefined();
    expect((await run.products.call.getProduct({ account_id, id: free.id })).price).toBeUndefined();
    const before = await count();
    // What reaches the service (a string amount, or a fraction, the gateway refuses before asking).
    for (const price of [
      { amount: 0, currency: 'EUR' },
      { amount: 100, currency: 'EURO' },
      { amount: 100, currency: 'XYZ' },
      { amount: 100, currency: '' },
    ] as Price[]) {
      const refused = await create({ name: 'Bad price', price }).catch((e: unknown) => e);
      expect({ price, refused }).toEqual({ price, refused: expect.any(AppError) });
      expect((refused as AppError).code).toBe('invalid_request');
    }
    expect(await count()).toBe(before);
  });
});

describe('bad input: a clear 4xx, nothing written', () => {
  it('refuses bad recurring prices', async () => {
    const before = await count();
    for (const price of [
      { amount: 0, currency: '', interval: 'month' },
      { amount: 100, currency: 'EUR', interval: 'week' },
      { amount: 100, currency: 'EUR', interval: 'month', trial_days: 366 },
      { amount: 100, currency: 'EUR', interval: 'month', interval_count: 13 },
      { amount: 100, currency: 'EUR', trial_days: 7 },
      { amount: 100, currency: 'EUR', interval: '', interval_count: 2 },
    ] as Price[]) {
      const refused = await create({ name: 'Bad', price }).catch((e: unknown) => e);
      expect({ price, code: (refused as AppError).code }).toEqual({ price, code: 'invalid_request' });
    }
    for (const payment_grace_days of [61, -1]) {
      const refused = await create({ name: 'Bad', policy: { payment_grace_days } as never }).catch((e: unknown) => e);
      expect({ payment_grace_days, code: (refused as AppError).code }).toEqual({
        payment_grace_days,
        code: 'invalid_request',
      });
    }
    expect(await count()).toBe(before);
    const oneTime = await create({ name: 'Once', price: { amount: 100, currency: 'EUR', interval: '' } });
    expect(oneTime.price).toEqual({ amount: 100, currency: 'EUR' });
    const monthly = await create({ name: 'Monthly', price: { amount: 100, currency: 'EUR', interval: 'month' } });
    expect(monthly.price).toEqual({
      amount: 100,
      currency: 'EUR',
      interval: 'month',
      interval_count: 1,
      trial_days: 0,
    });
  });
});
