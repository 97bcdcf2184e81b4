import { AppError, newId } from '@licensing/runtime';
import { Release, type ProductServiceService } from '@licensing/proto';
import type { FakeHandlers } from '@licensing/test-support';
import { client } from '../../../test/support/stack';
import { expectProblem } from '../../../test/support/problem-json';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// A product's releases at the gateway, over a product service faked with what it answers (releases in
// memory): the REST shapes (absent times null, Location on creation), the request's shapes checked
// before any call (a bad id, channel, status, field or body is 400 naming it), the calling account
// passed on, and the service's refusals as problems. What the product service decides (versions,
// precedence, states): services/product/test/component/releases.test.ts.

const vendor = fakeVendor('pro');
const readOnlyKey = `lk_full_reader_${vendor.account.id}`;
vendor.roleKeys = { [readOnlyKey]: 'read_only' };
const productId = newId('prod');
const releases: Release[] = [];
let h: GatewayWithFakeServices;

function releaseHandlers(): Partial<FakeHandlers<typeof ProductServiceService>> {
  const find = (account: string, id: string) => {
    const r = releases.find((x) => x.id === id && account === vendor.account.id);
    if (!r) throw AppError.notFound('release');
    return r;
  };
  return {
    createRelease: (req) => {
      if (req.product_id !== productId || req.account_id !== vendor.account.id) throw AppError.notFound('product');
      if (releases.some((r) => r.version === req.version))
        throw new AppError('conflict', `version ${req.version} exists already`);
      const r = Release.fromPartial({
        id: newId('rel'),
        product_id: req.product_id,
        version: req.version,
        channel: req.channel ?? 'stable',
        status: 'draft',
        notes: req.notes,
        published_at: req.published_at ?? '',
        entitlements: req.entitlements,
        created_at: new Date().toISOString(),
      });
      releases.push(r);
      return r;
    },
    listReleases: (req) => ({
      data: releases.filter(
        (r) => (!req.status || r.status === req.status) && (!req.channel || r.channel === req.channel),
      ),
      page: { has_more: false, next_cursor: '' },
    }),
    getRelease: ({ account_id, id }) => find(account_id, id),
    publishRelease: ({ account_id, id }) =>
      Object.assign(find(account_id, id), { status: 'published', published_at: new Date().toISOString() }),
    yankRelease: ({ account_id, id }) =>
      Object.assign(find(account_id, id), { status: 'yanked', yanked_at: new Date().toISOString() }),
    deleteRelease: ({ account_id, id }) => {
      const r = find(account_id, id);
      if (r.status !== 'draft') throw new AppError('conflict', 'only a draft can be deleted: yank it instead');
      releases.splice(releases.indexOf(r), 1);
      return r;
    },
  };
}

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: accountHandlers([vendor]), product: releaseHandlers() },
  });
});

afterAll(async () => {
  await h?.stop();
});

it('creates a draft (201, Location, its REST shape), lists, reads, publishes, yanks, and deletes only a draft', async () => {
  const api = client(h.url, vendor.apiKey);
  const made = await api('POST', `/api/v1/products/${productId}/releases`, {
    version: '1.4.2',
    notes: 'Faster start',
    entitlements: ['pro'],
  });
  expect(made.status).toBe(201);
  expect(made.headers.get('location')).toBe(`/api/v1/releases/${made.body.id}`);
  expect(made.body).toEqual({
    id: expect.stringMatching(/^rel_/),
    product_id: productId,
    version: '1.4.2',
    channel: 'stable',
    status: 'draft',
    notes: 'Faster start',
    published_at: null,
    yanked_at: null,
    entitlements: ['pro'],
    artifacts: [],
    created_at: expect.any(String),
  });
  expect(h.fakes.product.requestsTo('createRelease').at(-1)).toMatchObject({ account_id: vendor.account.id });
  const listed = await api('GET', `/api/v1/products/${productId}/releases?status=draft&channel=stable`);
  expect(listed.body).toEqual({ data: [made.body], has_more: false, next_cursor: null });
  expect((await api('GET', `/api/v1/releases/${made.body.id}`)).body).toEqual(made.body);
  const published = await api('POST', `/api/v1/releases/${made.body.id}/publish`);
  expect([published.status, published.body.status, typeof published.body.published_at]).toEqual([
    200,
    'published',
    'string',
  ]);
  expectProblem(await api('DELETE', `/api/v1/releases/${made.body.id}`), 409, 'conflict');
  const yanked = await api('POST', `/api/v1/releases/${made.body.id}/yank`);
  expect([yanked.body.status, typeof yanked.body.yanked_at]).toEqual(['yanked', 'string']);
  const draft = await api('POST', `/api/v1/products/${productId}/releases`, {
    version: '2.0.0-beta.1',
    channel: 'beta',
  });
  expect((await api('DELETE', `/api/v1/releases/${draft.body.id}`)).body.id).toBe(draft.body.id);
  expectProblem(await api('GET', `/api/v1/releases/${draft.body.id}`), 404, 'not_found');
});

it('checks shapes before any call: a bad id, channel, status, field or body is 400 naming it', async () => {
  const api = client(h.url, vendor.apiKey);
  const calls = () => h.fakes.product.requestsTo('createRelease').length;
  const before = calls();
  for (const [body, field] of [
    [{}, 'version'],
    [{ version: 'x'.repeat(65) }, 'version'],
    [{ version: '1.0.0', channel: 'nightly' }, 'channel'],
    [{ version: '1.0.0', notes: 'n'.repeat(10_001) }, 'notes'],
    [{ version: '1.0.0', entitlements: 'pro' }, 'entitlements'],
    [{ version: '1.0.0', entitlements: Array.from({ length: 51 }, (_, i) => `e${i}`) }, 'entitlements'],
    [{ version: '1.0.0', surprise: true }, 'surprise'],
  ] as const) {
    const res = await api('POST', `/api/v1/products/${productId}/releases`, body);
    expectProblem(res, 400, 'invalid_request');
    expect(JSON.stringify(res.body.errors)).toContain(field);
  }
  expectProblem(await api('POST', '/api/v1/products/prod_nope/releases', { version: '1.0.0' }), 400, 'invalid_request');
  expect(calls()).toBe(before);
  expectProblem(await api('GET', `/api/v1/products/${productId}/releases?channel=nightly`), 400, 'invalid_request');
  expectProblem(await api('GET', `/api/v1/products/${productId}/releases?status=gone`), 400, 'invalid_request');
  expectProblem(await api('GET', '/api/v1/releases/rel_nope'), 400, 'invalid_request');
  expectProblem(await api('POST', `/api/v1/releases/${newId('rel')}/publish`, { now: true }), 400, 'invalid_request');
});

it('passes the service refusals on (409 duplicate, 404 unknown product), and a read-only key reads but does not write', async () => {
  const api = client(h.url, vendor.apiKey);
  await api('POST', `/api/v1/products/${productId}/releases`, { version: '3.0.0' });
  expectProblem(await api('POST', `/api/v1/products/${productId}/releases`, { version: '3.0.0' }), 409, 'conflict');
  expectProblem(
    await api('POST', `/api/v1/products/${newId('prod')}/releases`, { version: '3.0.1' }),
    404,
    'not_found',
  );
  const reader = client(h.url, readOnlyKey);
  expect((await reader('GET', `/api/v1/products/${productId}/releases`)).status).toBe(200);
  expectProblem(await reader('POST', `/api/v1/products/${productId}/releases`, { version: '3.0.2' }), 403, 'forbidden');
});
