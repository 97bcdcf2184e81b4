import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo, createLogger, syncIndexes } from '@licensing/runtime';
import type { ApplySubscriptionRequest, Product } from '@licensing/proto';
import { licenseHandlers } from '../../src/handlers/license-handlers';
import { licenseModels } from '../../src/store/models';
import { LicenseStore } from '../../src/store/queries';
import { applySubscription } from '../../src/use-cases/apply-subscription';
import type { LicenseDeps } from '../../src/use-cases/deps';
import { checkNewLicense, issueLicense } from '../../src/use-cases/issue-license';
import { FakeClock, RecordingOutbox, refusal } from '../../../../test/support/fakes/common';

// A subscription's licence is the one its checkout issued for it: the licence records the subscription
// at issuance, and ApplySubscription moves no other licence of the account (one issued through the API,
// or another subscription's), against real FerretDB.

const account = 'acct_01JD8Z3K6Q2W4E5R6T7Y8V9X0C';
const product: Product = {
  id: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0C',
  account_id: account,
  name: 'Bound',
  description: '',
  created_at: new Date().toISOString(),
  policy: undefined,
  price: undefined,
  email_on_purchase: true,
};
const subA = 'sub_01JD8Z3K6Q2W4E5R6T7Y8V9X0A';
const subB = 'sub_01JD8Z3K6Q2W4E5R6T7Y8V9X0B';

let db: Connection;
let deps: LicenseDeps;
const clock = new FakeClock(new Date().toISOString());

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_sub_binding_${randomBytes(3).toString('hex')}`);
  const models = licenseModels(db);
  await syncIndexes(db);
  deps = {
    store: new LicenseStore(models),
    outbox: new RecordingOutbox(),
    clock,
    products: { getProduct: async () => product },
  };
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

const issue = async (subscriptionId?: string) =>
  (
    await issueLicense(
      deps,
      account,
      checkNewLicense({
        product_id: product.id,
        customer_email: 'buyer@example.com',
        ...(subscriptionId ? { subscription_id: subscriptionId } : {}),
      }),
    )
  ).doc;

const state = (key: string, subscriptionId: string, seq = 1): ApplySubscriptionRequest => ({
  account_id: account,
  key,
  subscription: {
    id: subscriptionId,
    status: 'active',
    trial_end: '',
    paid_through: new Date(clock.now().getTime() + 30 * 86_400_000).toISOString(),
    grace_until: '',
    ended_early: false,
  },
  expires_at: new Date(clock.now().getTime() + 30 * 86_400_000).toISOString(),
  product_id: product.id,
  quantity: 1,
  seq,
  change: 'created',
});

it('a licence issued for a subscription records it, and follows that subscription', async () => {
  const bound = await issue(subA);
  const stored = await deps.store.models.License.findById(bound._id).lean().exec();
  expect(stored?.issued_for_subscription).toBe(subA);
  const { doc } = await applySubscription(deps, state(bound.key, subA));
  expect(doc.subscription).toMatchObject({ id: subA, status: 'active', seq: 1 });
  // Later states of the same subscription still apply.
  const renewed = await applySubscription(deps, { ...state(bound.key, subA, 2), change: 'renewed' });
  expect(renewed.doc.subscription?.seq).toBe(2);
});

it('another licence of the account, issued without a subscription, is refused (409) and left unchanged', async () => {
  const plain = await issue();
  const before = await deps.store.models.License.findById(plain._id).lean().exec();
  const refused = await refusal(() => applySubscription(deps, state(plain.key, subA)));
  expect(refused).toMatchObject({ code: 'conflict', message: 'the licence was not issued for this subscription' });
  const after = await deps.store.models.License.findById(plain._id).lean().exec();
  expect(after).toEqual(before);
  expect(after?.subscription).toBeUndefined();
});

it("a licence issued for one subscription is refused another's (409), before and after it follows its own", async () => {
  const bound = await issue(subA);
  expect(await refusal(() => applySubscription(deps, state(bound.key, subB)))).toMatchObject({ code: 'conflict' });
  expect((await deps.store.models.License.findById(bound._id).lean().exec())?.subscription).toBeUndefined();
  await applySubscription(deps, state(bound.key, subA));
  expect(await refusal(() => applySubscription(deps, state(bound.key, subB, 5)))).toMatchObject({
    code: 'conflict',
  });
  expect((await deps.store.models.License.findById(bound._id).lean().exec())?.subscription?.id).toBe(subA);
});

it('subscription_id must be a subscription id', () => {
  expect(() =>
    checkNewLicense({ product_id: product.id, customer_email: 'buyer@example.com', subscription_id: 'lic_nope' }),
  ).toThrow('subscription_id must be a subscription id');
});

it('only the checkout service may issue a licence for a subscription (CreateLicense subscription_id)', async () => {
  // (The validation counter is not used by CreateLicense.)
  const handlers = licenseHandlers(deps, undefined as never);
  const req = {
    account_id: account,
    product_id: product.id,
    customer_email: 'buyer@example.com',
    idempotency_key: '',
    send_email: false,
    subscription_id: subA,
  };
  const log = createLogger('binding-test', 'silent');
  const refused = await refusal(() => handlers.createLicense(req, { requestId: 'req_1', caller: 'gateway', log }));
  expect(refused).toMatchObject({ code: 'invalid_request' });
  expect(await deps.store.models.License.countDocuments({ issued_for_subscription: subA, account_id: account })).toBe(
    2,
  );
  const issued = await handlers.createLicense(req, { requestId: 'req_2', caller: 'checkout', log });
  expect((await deps.store.models.License.findOne({ key: issued.key }).lean().exec())?.issued_for_subscription).toBe(
    subA,
  );
});
