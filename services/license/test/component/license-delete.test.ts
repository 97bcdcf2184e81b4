import { type AppError, newId } from '@licensing/runtime';
import { ValidateLicenseRequest } from '@licensing/proto';
import type { Connection } from 'mongoose';
import type { EventLog } from '../../../../test/support/events';
import { type RunningLicense, useLicenseService } from './running-license';

// DeleteLicense as the licence service does it, called over gRPC as the gateway calls it (real FerretDB
// and NATS): the licence and its activations go from the store, its key validates as not_found and no
// longer resolves (the gateway's look-up for a License credential), license.deleted is published (the
// gateways' caches and webhook endpoints follow it); refused while a subscription bills the licence,
// and for another account's key. The REST side (204, 404, 409, 403 for a License credential, the caches
// following license.deleted): gateway/test/component/license-delete-routes.test.ts; its delivery to a
// webhook endpoint: services/webhook/test/component/delivery.test.ts.

let svc: RunningLicense;
let events: EventLog;
let db: Connection;
const accountId = newId('acct');
let product: string;

useLicenseService(async (started, log) => {
  svc = started;
  events = log;
  db = await svc.db();
  product = svc.product(accountId, { max_activations: 3 }).id;
});

const issue = async (account = accountId, productId = product) => {
  const key = await svc.issue(account, productId, 'del@example.com');
  return svc.api.getLicense({ account_id: account, key });
};
const remove = (key: string, account = accountId) => svc.api.deleteLicense({ account_id: account, key });
const validate = (key: string, fingerprint = '', account = accountId) =>
  svc.api.validateLicense(
    ValidateLicenseRequest.fromPartial({ account_id: account, key, fingerprint, key_scope: 'full' }),
  );
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );

it('deletes the licence and its activations: validation answers not_found, its credential stops working, license.deleted is delivered', async () => {
  const license = await issue();
  const kept = await issue();
  await svc.activate(accountId, license.key, 'm-1');
  expect(await validate(license.key, 'm-1')).toMatchObject({ valid: true, code: 'valid' });
  expect(await svc.api.resolveLicenseKey({ key: license.key })).toMatchObject({ found: true, account_id: accountId });

  expect(await remove(license.key)).toMatchObject({ id: license.id, key: license.key });

  expect(await validate(license.key, 'm-1')).toMatchObject({ valid: false, code: 'not_found' });
  expect((await refusal(svc.api.getLicense({ account_id: accountId, key: license.key }))).code).toBe('not_found');
  // A License credential is this look-up: the key no longer resolves.
  expect(await svc.api.resolveLicenseKey({ key: license.key })).toMatchObject({ found: false });
  const page = { limit: 100, starting_after: '' };
  expect((await refusal(svc.api.listActivations({ account_id: accountId, key: license.key, page }))).code).toBe(
    'not_found',
  );
  expect(await db.collection('activations').countDocuments({ license_id: license.id })).toBe(0);
  expect(await db.collection('licenses').countDocuments({ _id: license.id } as never)).toBe(0);
  // Another licence of the account is untouched.
  expect(await validate(kept.key)).toMatchObject({ valid: true });

  const deletedData = (e: { data: unknown }) => (e.data as { license: { id: string } }).license;
  const event = await events.waitFor((e) => e.type === 'license.deleted' && deletedData(e).id === license.id);
  expect(deletedData(event)).toMatchObject({ id: license.id, key: license.key, product_id: product });

  // Gone: a second delete finds nothing.
  expect((await refusal(remove(license.key))).code).toBe('not_found');
});

it('is refused with 409 while a subscription bills the licence, and allowed once it is canceled', async () => {
  const license = await issue();
  const billedBy = (status: string) =>
    db.collection('licenses').updateOne({ _id: license.id } as never, {
      $set: {
        subscription: {
          id: 'sub_01JD8Z3K6Q2W4E5R6T7Y8V9XDE',
          status,
          trial_end: '',
          paid_through: '',
          grace_until: '',
        },
      },
    });
  for (const status of ['active', 'trialing', 'past_due', 'unpaid']) {
    await billedBy(status);
    const refused = await refusal(remove(license.key));
    expect([status, refused.code]).toEqual([status, 'conflict']);
    expect(refused.message).toContain('sub_01JD8Z3K6Q2W4E5R6T7Y8V9XDE');
    expect((await svc.api.getLicense({ account_id: accountId, key: license.key })).id).toBe(license.id);
  }
  await billedBy('canceled');
  expect((await remove(license.key)).id).toBe(license.id);
});

it("another account's key is not found, and its licence stays", async () => {
  const other = newId('acct');
  const theirs = await issue(other, svc.product(other).id);
  expect((await refusal(remove(theirs.key))).code).toBe('not_found');
  expect(await validate(theirs.key, '', other)).toMatchObject({ valid: true });
});
