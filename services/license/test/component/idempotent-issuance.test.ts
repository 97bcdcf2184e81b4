import { CreateLicenseRequest, LicenseServiceClient, ListLicensesRequest } from '@licensing/proto';
import { AppError, createClient, newId } from '@licensing/runtime';
import { credentialOf } from '../../../../scripts/lib/topology';
import { eventually } from '../../../../test/support/eventually';
import { startLicense, type RunningLicense } from './running-license';

// A licence issued under an idempotency key whose product look-up outlasts the call's deadline (a slow
// product service, a failover): the retry with the same key issues it once the product service answers
// again, and exactly one licence exists. The keys of the checkout service (`checkout:<session>`) are
// its own: the gateway's caller cannot reach them with the same key. The licence service alone, its
// product service faked (running-license.ts); the gateway's 503 with Retry-After for the first call:
// gateway/test/component/idempotent-issuance-routes.test.ts; the checkout side (a paid session whose
// licence the sweeper issues): services/checkout/test/component/paid-issuance.test.ts.

let r: RunningLicense;
let asCheckout: ReturnType<typeof createClient<LicenseServiceClient>>;
const account = newId('acct');

beforeAll(async () => {
  r = await startLicense();
  asCheckout = createClient(LicenseServiceClient, r.address, credentialOf(r.t, 'checkout'));
});

afterAll(async () => {
  asCheckout?.close();
  await r?.stop();
});

const licencesOf = async (productId: string) =>
  (
    await r.api.listLicenses(
      ListLicensesRequest.fromPartial({ account_id: account, product_id: productId, page: { limit: 100 } }),
    )
  ).data;

it('REST: a create that ran out of time is issued by the retry with the same key, once', async () => {
  const productId = r.product(account).id;
  const request = CreateLicenseRequest.fromPartial({
    account_id: account,
    product_id: productId,
    customer_email: 'ada@example.com',
    idempotency_key: `order-${newId('o').slice(-8)}`,
  });
  const release = r.holdProducts();
  let late: unknown;
  try {
    // The gateway's deadline, shortened: the product look-up outlasts it.
    late = await r.api.createLicense(request, { timeoutMs: 1000 }).catch((e: unknown) => e);
  } finally {
    release();
  }
  expect(late).toBeInstanceOf(AppError);
  expect((late as AppError).code).toBe('service_unavailable');
  // A client retrying with the same key is answered (conflict only for as long as the first run still ends).
  const retried = await eventually(() => r.api.createLicense(request), { timeoutMs: 15_000, intervalMs: 200 });
  const again = await r.api.createLicense(request);
  expect(again.key).toBe(retried.key);
  expect((await licencesOf(productId)).map((l) => l.key)).toEqual([retried.key]);
});

it('checkout’s idempotency keys are out of reach of REST keys of the same account', async () => {
  const productId = r.product(account).id;
  const key = `checkout:${newId('cs')}`;
  // A REST client of the account uses checkout's own key for its session first, with another body.
  const rest = await r.api.createLicense(
    CreateLicenseRequest.fromPartial({
      account_id: account,
      product_id: productId,
      customer_email: 'someone-else@example.com',
      idempotency_key: key,
    }),
  );
  const bought = await asCheckout.call.createLicense(
    CreateLicenseRequest.fromPartial({
      account_id: account,
      product_id: productId,
      customer_email: 'buyer@example.com',
      idempotency_key: key,
      send_email: false,
    }),
  );
  expect(bought.key).not.toBe(rest.key);
  const byEmail = Object.fromEntries((await licencesOf(productId)).map((l) => [l.customer_email, l.key]));
  expect(byEmail).toEqual({ 'buyer@example.com': bought.key, 'someone-else@example.com': rest.key });
});
