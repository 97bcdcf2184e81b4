import { LicensingClient, LicensingError, type Product } from '@licensing/client';
import { fakeFetch, json, problem } from '../../../../test/support/fake-fetch';

// client.products.archive, unarchive and delete: the path and method each asks for (a scripted fetch),
// the product answered, a 409 as a LicensingError naming why, and no repeat after a 503 (a second
// archive or delete would meet 409 or 404 instead of the answer).

const BASE = 'https://licensing.example.com';
const PROD = 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';

const product = (archived_at: string | null): Product => ({
  id: PROD,
  name: 'Photo Editor',
  description: null,
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
    expiration_strategy: 'restrict',
  },
  price: null,
  email_on_purchase: true,
  created_at: '2026-11-23T10:00:00Z',
  archived_at,
});

const vendor = (fetch: typeof globalThis.fetch) =>
  new LicensingClient({ baseUrl: BASE, apiKey: 'lk_full_x', fetch, maxRetries: 2 });

describe('archiving and deleting products', () => {
  it('archive, unarchive and delete go to their paths with the API key and answer the product', async () => {
    const archived = product('2026-12-07T10:00:00.000Z');
    const fake = fakeFetch(json(200, archived), json(200, product(null)), json(200, product(null)));
    const client = vendor(fake.fetch);
    await expect(client.products.archive(PROD)).resolves.toEqual(archived);
    expect((await client.products.unarchive(PROD)).archived_at).toBeNull();
    expect((await client.products.delete(PROD)).id).toBe(PROD);
    expect(fake.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      `POST ${BASE}/api/v1/products/${PROD}/archive`,
      `POST ${BASE}/api/v1/products/${PROD}/unarchive`,
      `DELETE ${BASE}/api/v1/products/${PROD}`,
    ]);
    expect(fake.calls.every((c) => c.headers.authorization === 'Bearer lk_full_x')).toBe(true);
  });

  it('a 409 is a LicensingError with the reason the API gave', async () => {
    const fake = fakeFetch(problem(409, 'conflict', 'the product has licences: archive it instead'));
    const err = await vendor(fake.fetch)
      .products.delete(PROD)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LicensingError);
    expect(err).toMatchObject({ status: 409, code: 'conflict', detail: expect.stringMatching(/has licences/) });
  });

  it('none is repeated after a 503 (a second try would meet 409 or 404)', async () => {
    for (const call of ['archive', 'unarchive', 'delete'] as const) {
      const fake = fakeFetch(problem(503, 'service_unavailable', 'down', {}, { 'retry-after': '0' }));
      await expect(vendor(fake.fetch).products[call](PROD)).rejects.toMatchObject({ status: 503 });
      expect(fake.calls).toHaveLength(1);
    }
  });

  it('refuses an empty id before any request', async () => {
    const fake = fakeFetch(json(200, product(null)));
    await expect(vendor(fake.fetch).products.archive('  ')).rejects.toThrow(TypeError);
    expect(fake.calls).toHaveLength(0);
  });
});
