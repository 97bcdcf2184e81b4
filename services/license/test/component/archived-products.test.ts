import { type AppError, createClient, newId } from '@licensing/runtime';
import { CreateLicenseRequest, LicenseBatchItem, LicenseServiceClient, ValidateLicenseRequest } from '@licensing/proto';
import { credentialOf } from '../../../../scripts/lib/topology';
import { eventually } from '../../../../test/support/eventually';
import { type RunningLicense, useLicenseService } from './running-license';

// What an archived product means to the licence service (real FerretDB and NATS, the product service
// faked and its product.updated published as it publishes it): no new licence or batch for it (409,
// naming why; the issuing cache hears the archive), except the checkout service's licence of a session
// paid before; its licences keep validating, activating, getting their files and renewing; unarchived,
// it issues again. And HasLicenses, the product service's question before it deletes a product: yes or
// no, one licence enough, asked only with the product service's credential.

let svc: RunningLicense;
let asCheckout: ReturnType<typeof createClient<LicenseServiceClient>>;
let asProduct: ReturnType<typeof createClient<LicenseServiceClient>>;
const accountId = newId('acct');

useLicenseService((started) => {
  svc = started;
  asCheckout = createClient(LicenseServiceClient, svc.address, credentialOf(svc.t, 'checkout'));
  asProduct = createClient(LicenseServiceClient, svc.address, credentialOf(svc.t, 'product'));
});

afterAll(() => {
  asCheckout?.close();
  asProduct?.close();
});

async function refusal(call: () => Promise<unknown>) {
  try {
    await call();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal, but the call succeeded');
}

const newLicence = (productId: string, email = 'buyer@example.com') => svc.issue(accountId, productId, email);
const batchOf = (productId: string) =>
  svc.api.createLicenseBatch({
    account_id: accountId,
    product_id: productId,
    idempotency_key: '',
    licenses: [LicenseBatchItem.fromPartial({ customer_email: 'one@example.com' })],
  });
const validate = (key: string) =>
  svc.api.validateLicense(ValidateLicenseRequest.fromPartial({ account_id: accountId, key, key_scope: 'full' }));

it('issues nothing new for an archived product (409), while its licences keep working; unarchived, it issues again', async () => {
  let product = svc.product(accountId, { max_activations: 3, duration_days: 30 });
  const key = await newLicence(product.id); // the issuing cache now remembers the product on sale
  product = await svc.setArchived(product, true);

  // The cache hears product.updated a moment after it is published (within the second).
  const refused = await eventually(async () => {
    const err = await refusal(() => newLicence(product.id, 'late@example.com'));
    expect(err).toMatchObject({ code: 'conflict' });
    return err;
  });
  expect(refused.message).toMatch(/archived.*issues no new licence/);
  expect(refused.message).toContain(`/api/v1/products/${product.id}/unarchive`);
  expect(await refusal(() => batchOf(product.id))).toMatchObject({
    code: 'conflict',
    message: expect.stringMatching(/archived/),
  });
  // The dashboard's issuance is refused the same way.
  expect(
    await refusal(() =>
      svc.webApi.createLicense(
        CreateLicenseRequest.fromPartial({
          account_id: accountId,
          product_id: product.id,
          customer_email: 'web@example.com',
        }),
      ),
    ),
  ).toMatchObject({ code: 'conflict' });

  // Its licence: validates, activates, gets its file, renews.
  expect(await validate(key)).toMatchObject({ valid: true, code: 'valid' });
  expect(await svc.activate(accountId, key, 'machine-1')).toMatch(/^act_/);
  expect(await validate(key)).toMatchObject({ valid: true });
  const file = await svc.api.issueLicenseFile(
    Object.assign({ account_id: accountId, key, fingerprint: '', ttl_days: 0, key_scope: 'full' }),
  );
  expect(file.signature.length).toBeGreaterThan(0);
  expect((await svc.api.transitionLicense({ account_id: accountId, key, action: 'renew' })).status).toBe('active');

  // Unarchived: licences are issued again.
  product = await svc.setArchived(product, false);
  await eventually(async () => expect(await newLicence(product.id, 'again@example.com')).toBeTruthy());
});

it('still issues the licence of a checkout session paid before the product was archived', async () => {
  let product = svc.product(accountId);
  await newLicence(product.id);
  product = await svc.setArchived(product, true);
  await eventually(async () =>
    expect(await refusal(() => newLicence(product.id, 'late@example.com'))).toMatchObject({ code: 'conflict' }),
  );
  const paid = await asCheckout.call.createLicense({
    account_id: accountId,
    product_id: product.id,
    customer_email: 'paid@example.com',
    idempotency_key: `checkout:${newId('cs')}`,
    send_email: false,
  });
  expect(paid).toMatchObject({ product_id: product.id, customer_email: 'paid@example.com', status: 'active' });
});

it('HasLicenses: whether a product has a licence, asked by the product service only', async () => {
  const sold = svc.product(accountId);
  const key = await newLicence(sold.id);
  const unsold = svc.product(accountId);
  const ask = (product_id: string, account_id = accountId) => asProduct.call.hasLicenses({ account_id, product_id });
  expect(await ask(sold.id)).toEqual({ has_licenses: true });
  expect(await ask(unsold.id)).toEqual({ has_licenses: false });
  // Another account's product of the same id has none of these.
  expect(await ask(sold.id, newId('acct'))).toEqual({ has_licenses: false });
  expect(await refusal(() => ask('not-a-product'))).toMatchObject({ code: 'invalid_request' });

  // A licence deleted is gone: the product has none left.
  await svc.api.deleteLicense({ account_id: accountId, key });
  expect(await ask(sold.id)).toEqual({ has_licenses: false });

  // The gateway may not ask it (the product service's own question).
  expect(await refusal(() => svc.api.hasLicenses({ account_id: accountId, product_id: sold.id }))).toMatchObject({
    code: 'forbidden',
  });
});
