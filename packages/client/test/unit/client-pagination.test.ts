import { LicensingClient } from '@licensing/client';
import { fakeFetch, json } from '../../../../test/support/fake-fetch';

// Lists are async iterables over every page, and .page() fetches one.

const item = (n: number) => ({ id: `prod_${n}` });

it('walks every page with starting_after = next_cursor, keeping the filters', async () => {
  const fake = fakeFetch(
    json(200, { data: [item(1), item(2)], has_more: true, next_cursor: 'prod_2' }),
    json(200, { data: [item(3)], has_more: false, next_cursor: null }),
  );
  const client = new LicensingClient({ baseUrl: 'https://a.test', apiKey: 'k', fetch: fake.fetch });
  const seen: string[] = [];
  for await (const l of client.licenses.list({ limit: 2, status: 'active' })) seen.push(l.id);
  expect(seen).toEqual(['prod_1', 'prod_2', 'prod_3']);
  expect(fake.calls.map((c) => c.url)).toEqual([
    'https://a.test/api/v1/licenses?limit=2&status=active',
    'https://a.test/api/v1/licenses?limit=2&status=active&starting_after=prod_2',
  ]);
});

it('fetches a page only when the previous one is used up', async () => {
  const fake = fakeFetch(
    json(200, { data: [item(1)], has_more: true, next_cursor: 'prod_1' }),
    json(200, { data: [item(2)], has_more: false, next_cursor: null }),
  );
  const client = new LicensingClient({ baseUrl: 'https://a.test', apiKey: 'k', fetch: fake.fetch });
  for await (const p of client.products.list()) {
    expect(p.id).toBe('prod_1');
    break;
  }
  expect(fake.calls).toHaveLength(1);
});

it('.page() answers one page as the API sends it, or the page after a cursor', async () => {
  const first = { data: [item(1)], has_more: true, next_cursor: 'prod_1' };
  const fake = fakeFetch(json(200, first));
  const client = new LicensingClient({ baseUrl: 'https://a.test', apiKey: 'k', fetch: fake.fetch });
  const list = client.webhooks.deliveries('we_1', { limit: 1 });
  await expect(list.page()).resolves.toEqual(first);
  await list.page('del_9');
  expect(fake.calls.map((c) => c.url)).toEqual([
    'https://a.test/api/v1/webhooks/we_1/deliveries?limit=1',
    'https://a.test/api/v1/webhooks/we_1/deliveries?limit=1&starting_after=del_9',
  ]);
});

it('stops when has_more is false even if a cursor is given, and on an empty page', async () => {
  const fake = fakeFetch(json(200, { data: [], has_more: false, next_cursor: 'x' }));
  const client = new LicensingClient({ baseUrl: 'https://a.test', apiKey: 'k', fetch: fake.fetch });
  await expect(client.checkout.list().toArray()).resolves.toEqual([]);
  expect(fake.calls).toHaveLength(1);
});

it('refuses a limit outside 1–100 before sending anything', () => {
  const fake = fakeFetch(json(200, {}));
  const client = new LicensingClient({ baseUrl: 'https://a.test', apiKey: 'k', fetch: fake.fetch });
  expect(() => client.licenses.list({ limit: 0 })).toThrow('limit must be a whole number from 1 to 100, got 0');
  expect(() => client.products.list({ limit: 2.5 })).toThrow('limit must be a whole number from 1 to 100');
  expect(fake.calls).toHaveLength(0);
});
