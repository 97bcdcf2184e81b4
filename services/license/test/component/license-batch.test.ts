import { type AppError, newId } from '@licensing/runtime';
import { type CreateLicenseBatchRequest, LicenseBatchItem, ValidateLicenseRequest } from '@licensing/proto';
import type { EventLog } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { type RunningLicense, useLicenseService } from './running-license';

// Licence batches as the licence service runs them (its transfer module), called over gRPC as the
// gateway calls it (real FerretDB and NATS, its product service faked): a job issues every item once,
// GetLicenseBatch shows the keys, each licence publishes license.created and the batch one
// license.batch_completed; an Idempotency-Key answers the same job; a bad batch is refused whole, with
// nothing issued; another account's batch is not found. The REST side (202, Location, the shapes the
// gateway refuses first): gateway/test/component/license-batch-routes.test.ts; the mails of the
// send_email items: test/system/licence-journey.test.ts.

let svc: RunningLicense;
let events: EventLog;
const accountId = newId('acct');
let product: string;

useLicenseService(async (started, log) => {
  svc = started;
  events = log;
  product = svc.product(accountId, { entitlements: ['base'] }).id;
});

const batch = (req: Partial<Omit<CreateLicenseBatchRequest, 'licenses'>> & { licenses: Partial<LicenseBatchItem>[] }) =>
  svc.api.createLicenseBatch({
    account_id: accountId,
    product_id: product,
    idempotency_key: '',
    ...req,
    licenses: req.licenses.map((l) => LicenseBatchItem.fromPartial(l)),
  });
const licencesOf = async (productId: string) => {
  const out: { key: string }[] = [];
  for (let after = ''; ; ) {
    const page = await svc.api.listLicenses({
      account_id: accountId,
      page: { limit: 100, starting_after: after },
      product_id: productId,
      customer_email: '',
      status: '',
    });
    out.push(...page.data);
    if (!page.page!.has_more) return out;
    after = page.page!.next_cursor;
  }
};
const done = (id: string, timeoutMs = 20_000) =>
  eventually(
    async () => {
      const job = await svc.api.getLicenseBatch({ account_id: accountId, id });
      expect(job.status).toBe('done');
      return job;
    },
    { timeoutMs, intervalMs: 100 },
  );
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );

it('issues every item once, shows the keys, and publishes each license.created and one license.batch_completed', async () => {
  const body = {
    licenses: [
      { customer_email: 'a@example.com', metadata: { order: '1' }, send_email: true },
      { customer_email: 'b@example.com', entitlements: ['pro'] },
      { customer_email: 'c@example.com', send_email: true },
    ],
    idempotency_key: `bulk-${Date.now()}`,
  };
  const started = await batch(body);
  expect(started).toMatchObject({
    status: 'running',
    total: 3,
    product_id: product,
    id: expect.stringMatching(/^lbat_/),
  });
  const job = await done(started.id);
  expect(job).toMatchObject({ total: 3, issued: 3, failed: 0 });
  expect(job.results.map((r) => [r.index, r.status, r.error])).toEqual([
    [0, 'issued', ''],
    [1, 'issued', ''],
    [2, 'issued', ''],
  ]);
  // What the notification service mails from: each item's address and whether it asked for the mail.
  expect(job.results.map((r) => [r.customer_email, r.send_email])).toEqual([
    ['a@example.com', true],
    ['b@example.com', false],
    ['c@example.com', true],
  ]);
  const keys = job.results.map((r) => r.key);
  const first = await svc.api.getLicense({ account_id: accountId, key: keys[0] });
  expect(first).toMatchObject({
    customer_email: 'a@example.com',
    metadata: { order: '1' },
    id: job.results[0].license_id,
  });
  expect((await svc.api.getLicense({ account_id: accountId, key: keys[1] })).entitlements).toEqual(['base', 'pro']);
  for (const key of keys)
    expect(
      await svc.api.validateLicense(
        ValidateLicenseRequest.fromPartial({ account_id: accountId, key, key_scope: 'full' }),
      ),
    ).toMatchObject({ valid: true });

  const summary = await events.waitFor(
    (e) => e.type === 'license.batch_completed' && (e.data as any).batch.id === job.id,
  );
  expect((summary.data as any).batch).toMatchObject({ total: 3, issued: 3, failed: 0, product_id: product });
  await eventually(() =>
    expect(
      events.all().filter((e) => e.type === 'license.created' && keys.includes((e.data as any).license.key)),
    ).toHaveLength(3),
  );

  // The same request under the same key is the same job: nothing issued twice.
  const again = await batch(body);
  expect(again).toMatchObject({ id: job.id, status: 'done' });
  expect(await licencesOf(product)).toHaveLength(3);
  // The same key with another body: refused.
  expect((await refusal(batch({ ...body, licenses: body.licenses.slice(1) }))).code).toBe('idempotency_key_reused');
  expect(
    events.all().filter((e) => e.type === 'license.batch_completed' && (e.data as any).batch.id === job.id),
  ).toHaveLength(1);
});

it('a batch of 1,000 licences is issued whole', async () => {
  const bulk = svc.product(accountId).id;
  const licenses = Array.from({ length: 1000 }, (_, i) => ({ customer_email: `user${i}@example.com` }));
  const started = await batch({ product_id: bulk, licenses, idempotency_key: `thousand-${Date.now()}` });
  const job = await done(started.id, 60_000);
  expect(job).toMatchObject({ total: 1000, issued: 1000, failed: 0 });
  expect(new Set(job.results.map((r) => r.key)).size).toBe(1000);
  expect(await licencesOf(bulk)).toHaveLength(1000);
}, 90_000);

it('refuses a batch of 1,001, an unknown product and a bad e-mail in an item (naming it), issuing nothing', async () => {
  const empty = svc.product(accountId).id;
  const many = Array.from({ length: 1001 }, (_, i) => ({ customer_email: `u${i}@example.com` }));
  const tooMany = await refusal(batch({ product_id: empty, licenses: many }));
  expect([tooMany.code, tooMany.fieldErrors[0]?.field]).toEqual(['invalid_request', 'licenses']);

  const unknown = await refusal(
    batch({ product_id: 'prod_01J0000000000000000000000A', licenses: [{ customer_email: 'a@example.com' }] }),
  );
  expect(unknown.code).toBe('not_found');

  const badEmail = await refusal(
    batch({
      product_id: empty,
      licenses: [
        { customer_email: 'ok@example.com' },
        { customer_email: 'ok2@example.com' },
        { customer_email: 'not-an-email' },
      ],
    }),
  );
  expect(badEmail.code).toBe('invalid_request');
  expect(badEmail.fieldErrors).toEqual([
    { field: 'licenses[2].customer_email', message: 'licenses[2].customer_email must be a valid e-mail address' },
  ]);
  expect((await refusal(batch({ product_id: empty, licenses: [] }))).code).toBe('invalid_request');
  expect(await licencesOf(empty)).toHaveLength(0);
  expect(
    (await refusal(svc.api.getLicenseBatch({ account_id: accountId, id: 'lbat_01J0000000000000000000000A' }))).code,
  ).toBe('not_found');
  expect((await refusal(svc.api.getLicenseBatch({ account_id: accountId, id: 'nope' }))).code).toBe('not_found');
});

it("another account's batch is not found", async () => {
  const started = await batch({ licenses: [{ customer_email: 'mine@example.com' }] });
  const stranger = newId('acct');
  expect((await refusal(svc.api.getLicenseBatch({ account_id: stranger, id: started.id }))).code).toBe('not_found');
  await done(started.id);
});
