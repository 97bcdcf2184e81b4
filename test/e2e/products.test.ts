import { client } from '../support/stack';
import { useStackWithAccount } from '../support/fixture';

const f = useStackWithAccount();

describe('products', () => {
  it('creates a product (201 with Location) and reads it back', async () => {
    const created = await f.api('POST', '/api/v1/products', {
      name: '  Photo Editor Pro ',
      description: 'Desktop app',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^prod_[0-9A-Z]{26}$/),
      name: 'Photo Editor Pro',
      description: 'Desktop app',
      policy: {
        duration_days: null,
        max_activations: null,
        grace_days: 0,
        require_activation: false,
        validate_keys_see_email: false,
        refund_action: 'revoke',
        lease_seconds: null,
        entitlements: [],
        customer_deactivations_per_30_days: 3,
        payment_grace_days: 7,
        max_file_ttl_days: 30,
      },
      price: null,
      email_on_purchase: true,
      created_at: expect.any(String),
    });
    expect(created.headers.get('location')).toBe(`/api/v1/products/${created.body.id}`);

    const read = await f.api('GET', `/api/v1/products/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('publishes product.created with the documented envelope, carrying the request id', async () => {
    const created = await f.api(
      'POST',
      '/api/v1/products',
      { name: 'Evented' },
      { 'x-request-id': 'trace-product-created-1' },
    );
    expect(created.headers.get('x-request-id')).toBe('trace-product-created-1');
    const event = await f.events.waitFor(
      (e) => e.type === 'product.created' && (e.data as { product: { id: string } }).product.id === created.body.id,
    );
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'product.created',
      account_id: f.accountId,
      created_at: expect.any(String),
      request_id: 'trace-product-created-1',
      data: { product: { id: created.body.id, name: 'Evented', description: '', created_at: created.body.created_at } },
    });
    expect(f.events.subjectOf(event.id)).toBe(`${f.stack.topology.subjectPrefix}.product.created`);
  });

  it('lists newest first with cursor pagination', async () => {
    const fresh = await f.stack.newAccount();
    const own = client(f.stack.url, fresh.apiKey);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await own('POST', '/api/v1/products', { name: `P${i}` })).body.id);
    const first = await own('GET', '/api/v1/products?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data.map((p: { id: string }) => p.id)).toEqual([ids[4], ids[3]]);
    expect(first.body.has_more).toBe(true);
    expect(first.body.next_cursor).toBe(ids[3]);
    const second = await own('GET', `/api/v1/products?limit=2&starting_after=${first.body.next_cursor}`);
    expect(second.body.data.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    const last = await own('GET', `/api/v1/products?limit=2&starting_after=${second.body.next_cursor}`);
    expect(last.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], has_more: false, next_cursor: null });
    const all = await own('GET', '/api/v1/products');
    expect(all.body.data).toHaveLength(5);
  });

  it.each([['0'], ['1000'], ['-1'], ['abc'], ['1.5']])('refuses limit=%s with 400', async (limit) => {
    const res = await f.api('GET', `/api/v1/products?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      status: 400,
      code: 'invalid_request',
      errors: [{ field: 'limit', message: expect.any(String) }],
    });
  });

  it('refuses a malformed cursor and unknown query parameters', async () => {
    expect((await f.api('GET', '/api/v1/products?starting_after=nope')).body).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'starting_after' }],
    });
    expect((await f.api('GET', '/api/v1/products?sort=name')).body).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'sort' }],
    });
  });

  it('hides another account’s product (404) and never lists it', async () => {
    const mine = await f.api('POST', '/api/v1/products', { name: 'Mine' });
    const other = await f.stack.newAccount();
    const theirs = client(f.stack.url, other.apiKey);
    const res = await theirs('GET', `/api/v1/products/${mine.body.id}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found', detail: 'product not found' });
    expect((await theirs('GET', '/api/v1/products')).body.data).toEqual([]);
  });

  it('answers 400 for a malformed product id and 404 for an unknown one', async () => {
    expect((await f.api('GET', '/api/v1/products/xyz')).status).toBe(400);
    expect((await f.api('GET', '/api/v1/products/prod_01M82BCFGS21FWB5Z5A498AR3N')).status).toBe(404);
  });

  it('validates product input and writes nothing when it is bad', async () => {
    const fresh = await f.stack.newAccount();
    const own = client(f.stack.url, fresh.apiKey);
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 'ok', description: 'd'.repeat(2001) }, 'description'],
      [{ name: 'ok', color: 'red' }, 'color'],
    ];
    for (const [body, field] of cases) {
      const res = await own('POST', '/api/v1/products', body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    expect((await own('GET', '/api/v1/products')).body.data).toEqual([]);
  });
});
