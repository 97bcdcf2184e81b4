import { CreateProductRequest } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import { testTopology } from '../../../../test/support/stack';
import { useProductService } from './running-product';

// The product service alone, over gRPC as the gateway calls it, against real FerretDB and NATS (the
// licence service it asks only before a deletion is faked: product-states.test.ts): a product is created, read back and listed newest first with a cursor,
// only within its account; product.created carries the caller's request id; bad input is refused
// naming the field, and nothing is written. The REST face of these calls: gateway/test/component.

const t = testTopology();
const run = useProductService(t);
const api = () => run.products.call;
/** A create request as the gateway sends it: every field present (absent strings are empty). */
const create = (fields: Partial<CreateProductRequest>, requestId?: string) =>
  api().createProduct(CreateProductRequest.fromPartial(fields), { requestId });
const NO_PAGE = { limit: 100, starting_after: '' };

it('creates a product (its name trimmed) and reads back the same one', async () => {
  const account_id = newId('acct');
  const created = await create({ account_id, name: '  Photo Editor Pro ', description: 'Desktop app' });
  expect(created).toMatchObject({
    id: expect.stringMatching(/^prod_[0-9A-Z]{26}$/),
    account_id,
    name: 'Photo Editor Pro',
    description: 'Desktop app',
    email_on_purchase: true,
    created_at: expect.any(String),
  });
  expect(created.policy).toMatchObject({ grace_days: 0, require_activation: false, entitlements: [] });
  expect(await api().getProduct({ account_id, id: created.id })).toEqual(created);
});

it('publishes product.created with the documented envelope, carrying the request id', async () => {
  const account_id = newId('acct');
  const created = await create({ account_id, name: 'Evented' }, 'trace-product-created-1');
  const event = await run.events.waitFor(
    (e) => e.type === 'product.created' && (e.data as { product: { id: string } }).product.id === created.id,
  );
  expect(event).toEqual({
    id: expect.stringMatching(/^evt_/),
    type: 'product.created',
    account_id,
    created_at: expect.any(String),
    request_id: 'trace-product-created-1',
    data: {
      product: { id: created.id, name: 'Evented', description: '', created_at: created.created_at, archived_at: null },
    },
  });
  expect(run.events.subjectOf(event.id)).toBe(`${t.subjectPrefix}.product.created`);
});

it('lists newest first with cursor pagination', async () => {
  const account_id = newId('acct');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await create({ account_id, name: `P${i}` })).id);
  const page = (starting_after = '') => api().listProducts({ account_id, page: { limit: 2, starting_after } });
  const first = await page();
  expect(first.data.map((p) => p.id)).toEqual([ids[4], ids[3]]);
  expect(first.page).toEqual({ has_more: true, next_cursor: ids[3] });
  const second = await page(first.page!.next_cursor);
  expect(second.data.map((p) => p.id)).toEqual([ids[2], ids[1]]);
  const last = await page(second.page!.next_cursor);
  expect(last.data.map((p) => p.id)).toEqual([ids[0]]);
  expect(last.page?.has_more).toBe(false);
  expect((await api().listProducts({ account_id, page: NO_PAGE })).data).toHaveLength(5);
});

it('hides another account’s product (not_found) and never lists it', async () => {
  const mine = await create({ account_id: newId('acct'), name: 'Mine' });
  const other = newId('acct');
  await expect(api().getProduct({ account_id: other, id: mine.id })).rejects.toMatchObject({
    code: 'not_found',
    message: expect.stringContaining('product not found'),
  });
  expect((await api().listProducts({ account_id: other, page: NO_PAGE })).data).toEqual([]);
});

it('refuses bad product input naming the field, and writes nothing', async () => {
  const account_id = newId('acct');
  const cases: [Partial<CreateProductRequest>, string][] = [
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 'ok', description: 'd'.repeat(2001) }, 'description'],
  ];
  for (const [body, field] of cases)
    await expect(create({ account_id, ...body })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [expect.objectContaining({ field })],
    });
  expect((await api().listProducts({ account_id, page: NO_PAGE })).data).toEqual([]);
});
