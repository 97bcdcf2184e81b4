import mongoose, { type Model, type Schema } from 'mongoose';
import { shapeOf, type QueryShape } from '@licensing/runtime';
import { checkoutStatuses, licenseStatuses } from '@licensing/proto';
import { licenseModels } from '../../services/license/src/store/models';
import { LicenseStore } from '../../services/license/src/store/queries';
import { checkoutModels } from '../../services/checkout/src/store/models';
import { CheckoutStore } from '../../services/checkout/src/store/queries';
import { servesPage, type Index } from '../../scripts/lib/index-coverage';

// Every filter a caller may put on a list (GET /licenses?status=…, ?product_id=…, checkout sessions
// by status) has an index that serves its pages: the filter the store really sends, against the
// indexes its model really declares. No database: the model's find() only records the filter.

const conn = mongoose.createConnection(); // never connected: the schemas and their indexes only
const now = new Date('2026-06-01T10:00:00Z');

/** A model whose find() records the filter and sort of the page the store asks for. */
function recording<T>(model: Model<T>, shapes: QueryShape[]) {
  const fake = {
    collection: model.collection,
    find(filter: Record<string, unknown>) {
      const query = {
        sort(sort: Record<string, unknown>) {
          shapes.push(shapeOf(model.collection.collectionName, 'find', filter, sort));
          return query;
        },
        limit: () => query,
        lean: async () => [],
      };
      return query;
    },
  };
  return fake as unknown as Model<T>;
}

const declared = (model: { schema: Schema }): Index[] =>
  (model.schema.indexes() as [Record<string, 1 | -1>, unknown][]).map(([keys]) => Object.entries(keys));

const unserved = (shapes: QueryShape[], indexes: Index[]) =>
  shapes.filter((shape) => !indexes.some((index) => servesPage(index, shape)));

afterAll(() => conn.close());

it('licences listed by product, customer e-mail or status: each filter has an index its pages use', async () => {
  const models = licenseModels(conn);
  const shapes: QueryShape[] = [];
  const store = new LicenseStore({ ...models, License: recording(models.License, shapes) });
  const none = { productId: '', customerEmail: '', status: '' as const };
  await store.list('acct_1', { ...none, productId: 'prod_1' }, undefined, now);
  await store.list('acct_1', { ...none, customerEmail: 'Ada@Example.com' }, undefined, now);
  for (const status of licenseStatuses)
    await store.list('acct_1', { ...none, status }, { limit: 20, starting_after: 'lic_9' }, now);
  expect(shapes).toHaveLength(2 + licenseStatuses.length);
  expect(unserved(shapes, declared(models.License))).toEqual([]);
});

it('checkout sessions listed by status: an index its pages use', async () => {
  const models = checkoutModels(conn);
  const shapes: QueryShape[] = [];
  const store = new CheckoutStore({ ...models, Session: recording(models.Session, shapes) });
  for (const status of checkoutStatuses) await store.list('acct_1', status, undefined, now);
  expect(shapes).toHaveLength(checkoutStatuses.length);
  expect(unserved(shapes, declared(models.Session))).toEqual([]);
});

it('a page whose filter leaves an equality out of the index’s lead is not served (the rule above)', () => {
  const byAccount: Index = [
    ['account_id', 1],
    ['_id', -1],
  ];
  const byStatus: Index = [
    ['account_id', 1],
    ['status', 1],
    ['_id', -1],
  ];
  const suspended = shapeOf('licenses', 'find', { account_id: 'a', status: 'suspended' }, { _id: -1 });
  expect(servesPage(byAccount, suspended)).toBe(false);
  expect(servesPage(byStatus, suspended)).toBe(true);
  expect(servesPage(byStatus, shapeOf('licenses', 'find', { account_id: 'a' }, { _id: -1 }))).toBe(false); // the sort must follow
  expect(servesPage(byAccount, shapeOf('licenses', 'find', { account_id: 'a' }, { _id: -1 }))).toBe(true);
});
