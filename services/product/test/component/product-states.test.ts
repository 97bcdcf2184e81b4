import { CreateProductRequest, CreateReleaseRequest, type DomainEvent } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { testTopology } from '../../../../test/support/stack';
import { useProductService } from './running-product';

// Archiving, unarchiving and deleting a product in the product service alone, over gRPC as the gateway
// calls it, against real FerretDB and NATS, the licence service faked at the gRPC boundary: each state
// change once (409 otherwise), with product.updated and the audit log's product.archived or
// product.unarchived on the stream before the answer; a deletion only without licences (the licence
// service asked with the product service's own credential, before and after the product is archived)
// and without releases, its signing keys gone with it and product.deleted on the stream; a licence
// issued while the deletion runs refuses it and the product is back on sale. The REST face:
// gateway/test/component/product-archive-routes.test.ts.

const t = testTopology();
const run = useProductService(t);
const api = () => run.products.call;

async function newProduct(name = 'Photo Editor') {
  const account_id = newId('acct');
  const product = await api().createProduct(CreateProductRequest.fromPartial({ account_id, name }));
  return { account_id, id: product.id, product };
}

const about = (type: string, id: string) => (e: DomainEvent) =>
  e.type === type && (e.data as { product: { id: string } }).product.id === id;

/** The refusal a call ends in, or an error when it succeeds. */
async function refusal(call: () => Promise<unknown>) {
  try {
    await call();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a refusal, but the call succeeded');
}

describe('archiving and unarchiving', () => {
  it('archives: archived_at set and read back, product.updated and product.archived on the stream before the answer', async () => {
    const ref = await newProduct();
    expect(ref.product.archived_at).toBeUndefined();
    const archived = await api().archiveProduct(
      { account_id: ref.account_id, id: ref.id },
      { requestId: 'trace-archive-1' },
    );
    expect(archived).toEqual({ ...ref.product, archived_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(await api().getProduct({ account_id: ref.account_id, id: ref.id })).toEqual(archived);
    // Flushed before the answer: both are on the stream already (the log reads them as they arrive).
    const updated = await run.events.waitFor(about('product.updated', ref.id));
    expect(updated).toMatchObject({
      account_id: ref.account_id,
      request_id: 'trace-archive-1',
      data: { product: { id: ref.id, archived_at: archived.archived_at } },
    });
    const action = await run.events.waitFor(about('product.archived', ref.id));
    expect(action).toMatchObject({
      request_id: 'trace-archive-1',
      data: { product: { id: ref.id, name: 'Photo Editor' } },
    });
    expect(run.events.subjectOf(action.id)).toBe(`${t.subjectPrefix}.product.archived`);
    // Listed as it is.
    const listed = await api().listProducts({ account_id: ref.account_id, page: { limit: 10, starting_after: '' } });
    expect(listed.data.map((p) => p.archived_at)).toEqual([archived.archived_at]);
  });

  it('refuses to archive an archived product and to unarchive one on sale (409); unarchives an archived one', async () => {
    const ref = await newProduct();
    const req = { account_id: ref.account_id, id: ref.id };
    expect(await refusal(() => api().unarchiveProduct(req))).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('not archived'),
    });
    await api().archiveProduct(req);
    expect(await refusal(() => api().archiveProduct(req))).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('archived already'),
    });
    const back = await api().unarchiveProduct(req);
    expect(back.archived_at).toBeUndefined();
    await run.events.waitFor(about('product.unarchived', ref.id));
    expect((await api().getProduct(req)).archived_at).toBeUndefined();
  });

  it('another account’s product is not found', async () => {
    const ref = await newProduct();
    for (const call of ['archiveProduct', 'unarchiveProduct', 'deleteProduct'] as const)
      expect(await refusal(() => api()[call]({ account_id: newId('acct'), id: ref.id }))).toMatchObject({
        code: 'not_found',
      });
    expect((await api().getProduct({ account_id: ref.account_id, id: ref.id })).archived_at).toBeUndefined();
  });
});

describe('deleting', () => {
  it('deletes a product without licences or releases, with its signing keys; product.deleted is on the stream', async () => {
    const ref = await newProduct('Typo');
    const req = { account_id: ref.account_id, id: ref.id };
    await api().rotateSigningKey(req);
    const asked = run.licenses.requestsTo('hasLicenses').length;
    const deleted = await api().deleteProduct(req, { requestId: 'trace-delete-1' });
    expect(deleted).toEqual(ref.product);
    expect(await refusal(() => api().getProduct(req))).toMatchObject({ code: 'not_found' });
    expect(await refusal(() => api().listSigningKeys(req))).toMatchObject({ code: 'not_found' });
    expect(await refusal(() => api().deleteProduct(req))).toMatchObject({ code: 'not_found' });
    // Asked twice (before and after archiving), by the product service itself, about this product.
    const questions = run.licenses.calls.filter((c) => c.method === 'hasLicenses').slice(asked);
    expect(questions.map((c) => [c.caller, c.request])).toEqual([
      ['product', { account_id: ref.account_id, product_id: ref.id }],
      ['product', { account_id: ref.account_id, product_id: ref.id }],
    ]);
    const event = await run.events.waitFor(about('product.deleted', ref.id));
    expect(event).toMatchObject({ request_id: 'trace-delete-1', data: { product: { id: ref.id, name: 'Typo' } } });
    // Archived on its way out, so the licence service's caches stopped issuing for it first.
    await run.events.waitFor(about('product.updated', ref.id));
  });

  it('refuses a product with licences (409 naming why), changing nothing', async () => {
    const ref = await newProduct();
    run.licensed.add(ref.id);
    const req = { account_id: ref.account_id, id: ref.id };
    expect(await refusal(() => api().deleteProduct(req))).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('has licences'),
    });
    expect(await api().getProduct(req)).toEqual(ref.product);
  });

  it('refuses a product with a release (409 naming why) before the licence service is asked', async () => {
    const ref = await newProduct();
    await api().createRelease(
      CreateReleaseRequest.fromPartial({ account_id: ref.account_id, product_id: ref.id, version: '1.0.0' }),
    );
    const asked = run.licenses.requestsTo('hasLicenses').length;
    expect(await refusal(() => api().deleteProduct({ account_id: ref.account_id, id: ref.id }))).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('has releases'),
    });
    expect(run.licenses.requestsTo('hasLicenses')).toHaveLength(asked);
  });

  it('a licence issued while the deletion runs refuses it, and the product is back on sale', async () => {
    const ref = await newProduct();
    const req = { account_id: ref.account_id, id: ref.id };
    // No licence when first asked; one by the second question (issued before the archive took effect).
    let questions = 0;
    run.licenses.handle({
      hasLicenses: ({ product_id }) => ({
        has_licenses: run.licensed.has(product_id) || (product_id === ref.id && ++questions > 1),
      }),
    });
    try {
      expect(await refusal(() => api().deleteProduct(req))).toMatchObject({ code: 'conflict' });
    } finally {
      run.licenses.handle({ hasLicenses: ({ product_id }) => ({ has_licenses: run.licensed.has(product_id) }) });
    }
    expect(questions).toBe(2);
    expect((await api().getProduct(req)).archived_at).toBeUndefined();
  });

  it('the licence service away: 503, and the product stays as it was', async () => {
    const ref = await newProduct();
    const req = { account_id: ref.account_id, id: ref.id };
    run.licenses.handle({
      hasLicenses: () => {
        throw new AppError('service_unavailable', 'the licence service is away');
      },
    });
    try {
      const refused = await refusal(() => api().deleteProduct(req));
      expect(refused.code).not.toBe('conflict');
    } finally {
      run.licenses.handle({ hasLicenses: ({ product_id }) => ({ has_licenses: run.licensed.has(product_id) }) });
    }
    expect(await api().getProduct(req)).toEqual(ref.product);
  });
});
