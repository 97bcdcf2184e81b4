import {
  ApplySubscriptionRequest,
  CreateLicenseRequest,
  LicenseServiceClient,
  ValidateLicenseRequest,
  type LicensePolicy,
} from '@licensing/proto';
import { createClient, newId } from '@licensing/runtime';
import { credentialOf } from '../../../../scripts/lib/topology';
import { EventLog } from '../../../../test/support/events';
import { startLicense, type RunningLicense } from './running-license';

// What the licence service decides for a licence that follows a subscription, as the checkout service
// tells it each state (ApplySubscription; what it sends at each step of a subscription:
// services/checkout/test/component/subscriptions.test.ts, subscription-trials.test.ts): the expiry
// moves to the period end, max_activations counts the seats, a past due one stays valid asking for a
// payment, an unpaid one is suspended and reinstated once paid, a cancelled one expires (at once when it
// ended early, whatever the policy's grace days; with them when it ran to its period end), a trial's end
// is in the answer, and a rerolled licence keeps following its subscription by its old key. The
// license.* events say so. The licence service alone, its product service faked (running-license.ts).

const DAY = 86_400_000;
const account = newId('acct');
let r: RunningLicense;
let asCheckout: ReturnType<typeof createClient<LicenseServiceClient>>;
let events: EventLog;
let seq = 0;

beforeAll(async () => {
  r = await startLicense();
  asCheckout = createClient(LicenseServiceClient, r.address, credentialOf(r.t, 'checkout'));
  events = await EventLog.open(r.t.natsUrl, r.t.stream);
});

afterAll(async () => {
  asCheckout?.close();
  await events?.close();
  await r?.stop();
});

const at = (ms: number) => new Date(r.clock.now().getTime() + ms).toISOString();

/** A licence the checkout service issues for a new subscription of a product with `policy`. */
async function subscribed(policy: Partial<LicensePolicy> = {}) {
  const product = r.product(account, { payment_grace_days: 7, ...policy });
  const subscriptionId = newId('sub');
  const licence = await asCheckout.call.createLicense(
    CreateLicenseRequest.fromPartial({
      account_id: account,
      product_id: product.id,
      customer_email: 'subscriber@example.com',
      subscription_id: subscriptionId,
      idempotency_key: `checkout:${newId('cs')}`,
    }),
  );
  /** Tells the licence a state of its subscription, as the checkout service does. */
  const apply = (
    change: string,
    subscription: Partial<ApplySubscriptionRequest['subscription']>,
    expiresAt: string,
    over: Partial<ApplySubscriptionRequest> = {},
  ) =>
    asCheckout.call.applySubscription(
      ApplySubscriptionRequest.fromPartial({
        account_id: account,
        key: licence.key,
        product_id: product.id,
        quantity: 1,
        seq: ++seq,
        change,
        expires_at: expiresAt,
        subscription: { id: subscriptionId, status: 'active', paid_through: expiresAt, ...subscription },
        ...over,
      }),
    );
  return { key: licence.key, subscriptionId, apply };
}

const validate = async (key: string) => {
  const v = await r.api.validateLicense(ValidateLicenseRequest.fromPartial({ account_id: account, key }));
  return {
    valid: v.valid,
    code: v.code,
    next_action: v.next_action,
    status: v.license?.status,
    expires_at: v.license?.expires_at,
    trial_end: v.license?.subscription?.trial_end ?? '',
  };
};
const licence = (key: string) => r.api.getLicense({ account_id: account, key });
const licenseEvent = (type: string, key: string) =>
  events.waitFor((e) => e.type === type && (e.data as { license?: { key: string } }).license?.key === key);

describe('a monthly product sold on the hosted page, from purchase to expiry', () => {
  it('gives an active subscription with seats and a licence valid to the period end', async () => {
    const s = await subscribed({ max_activations: 2 });
    const end = at(30 * DAY);
    await s.apply('created', {}, end, { quantity: 3 });
    const l = await licence(s.key);
    expect(l.expires_at).toBe(end);
    expect(l.policy?.max_activations).toBe(6); // 2 per seat × 3 seats
    expect(l.subscription).toMatchObject({ id: s.subscriptionId, status: 'active', grace_until: '' });
    expect(await validate(s.key)).toMatchObject({ valid: true, code: 'valid', next_action: 'none', trial_end: '' });
  });

  it('advancing the clock one month renews it, with the licence expiry moved', async () => {
    const s = await subscribed();
    await s.apply('created', {}, at(30 * DAY));
    const renewed = at(61 * DAY);
    await s.apply('renewed', {}, renewed);
    await licenseEvent('license.renewed', s.key);
    expect((await licence(s.key)).expires_at).toBe(renewed);
    expect((await validate(s.key)).expires_at).toBe(renewed);
  });

  it('with the failing card it goes past due: the licence is still valid, with next_action update_payment; after the grace it is unpaid and suspended; a payment reinstates it', async () => {
    const s = await subscribed();
    const periodEnd = at(-DAY);
    await s.apply('created', {}, at(29 * DAY));
    const graceUntil = new Date(Date.parse(periodEnd) + 7 * DAY).toISOString();
    await s.apply('past_due', { status: 'past_due', paid_through: periodEnd, grace_until: graceUntil }, at(29 * DAY));
    expect(await validate(s.key)).toMatchObject({ valid: true, code: 'valid', next_action: 'update_payment' });
    const l = await licence(s.key);
    expect(l.subscription?.status).toBe('past_due');
    expect(Date.parse(l.subscription!.grace_until) - Date.parse(periodEnd)).toBe(7 * DAY);
    await s.apply('unpaid', { status: 'unpaid', paid_through: periodEnd }, at(29 * DAY));
    await licenseEvent('license.suspended', s.key);
    expect(await validate(s.key)).toMatchObject({
      valid: false,
      code: 'subscription_unpaid',
      status: 'suspended',
      next_action: 'update_payment',
    });
    // A payment through the billing portal reinstates and renews it.
    const renewed = at(60 * DAY);
    await s.apply('renewed', {}, renewed);
    await licenseEvent('license.reinstated', s.key);
    expect(await validate(s.key)).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
    expect((await licence(s.key)).expires_at).toBe(renewed);
  });

  it('cancelled at period end, then past it, the licence is expired (next_action renew); cancelled now, it expires now', async () => {
    const s = await subscribed();
    await s.apply('created', {}, at(30 * DAY));
    await s.apply('updated', {}, at(30 * DAY));
    expect((await validate(s.key)).valid).toBe(true);
    await s.apply('canceled', { status: 'canceled', paid_through: at(-DAY) }, at(-1000));
    expect(await validate(s.key)).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' });
    const now = await subscribed();
    await now.apply('created', {}, at(30 * DAY));
    await now.apply('canceled', { status: 'canceled', ended_early: true, paid_through: at(0) }, at(0));
    expect(await validate(now.key)).toMatchObject({ valid: false, code: 'expired' });
  });
});

describe('a year of renewals after a reroll', () => {
  it('the rerolled licence keeps following its subscription (the new key shown from its next change)', async () => {
    const s = await subscribed();
    await s.apply('created', {}, at(30 * DAY));
    const newKey = (await r.api.rerollLicense({ account_id: account, key: s.key, grace_hours: 0, send_email: false }))
      .key;
    expect(newKey).not.toBe(s.key);
    const yearOn = at(365 * DAY);
    // The checkout service still knows the old key: the licence is found by it, and answers with the new one.
    const told = await s.apply('renewed', {}, yearOn);
    expect(told.key).toBe(newKey);
    expect((await licence(newKey)).expires_at).toBe(yearOn);
    expect(await validate(newKey)).toMatchObject({ valid: true, expires_at: yearOn });
    expect((await validate(s.key)).code).toBe('not_found');
  });
});

describe('cancellation and the policy’s grace days', () => {
  const graced = { duration_days: 30, grace_days: 5 };

  it('cancelled now, the licence is expired at once though its policy has grace days (cached and uncached, GET and POST)', async () => {
    const s = await subscribed(graced);
    await s.apply('created', {}, at(30 * DAY));
    expect(await validate(s.key)).toMatchObject({ valid: true, code: 'valid' });
    await s.apply('canceled', { status: 'canceled', ended_early: true, paid_through: at(0) }, at(0));
    expect(await validate(s.key)).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' });
    expect((await licence(s.key)).status).toBe('expired');
  });

  it('cancelled at the period end, past it: expired_in_grace (valid, renew) for the policy’s grace days', async () => {
    const s = await subscribed(graced);
    await s.apply('created', {}, at(30 * DAY));
    await s.apply('canceled', { status: 'canceled', paid_through: at(-1000) }, at(-1000));
    expect(await validate(s.key)).toMatchObject({ valid: true, code: 'expired_in_grace', next_action: 'renew' });
    // Until the expiry (the moment it ended) plus the 5 grace days.
    expect(Date.parse((await licence(s.key)).expires_at)).toBeLessThanOrEqual(r.clock.now().getTime());
    r.clock.advance(5 * DAY);
    expect(await validate(s.key)).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' });
  });
});

describe('a trial', () => {
  it('gives a valid licence at once with trial_end in the answer; the first payment converts it', async () => {
    const s = await subscribed();
    const trialEnd = at(14 * DAY);
    await s.apply('created', { status: 'trialing', trial_end: trialEnd }, trialEnd);
    expect(await validate(s.key)).toMatchObject({ valid: true, code: 'valid', trial_end: trialEnd });
    await s.apply('renewed', { status: 'active', trial_end: '' }, at(379 * DAY));
    expect(await validate(s.key)).toMatchObject({ valid: true, trial_end: '' });
  });

  it('a trial ended unpaid expires the licence at once, though its policy has grace days', async () => {
    const s = await subscribed({ duration_days: 30, grace_days: 5 });
    const trialEnd = at(7 * DAY);
    await s.apply('created', { status: 'trialing', trial_end: trialEnd }, trialEnd);
    expect(await validate(s.key)).toMatchObject({ valid: true, code: 'valid', trial_end: trialEnd });
    await s.apply('canceled', { status: 'canceled', ended_early: true, paid_through: at(0) }, at(0));
    await licenseEvent('license.updated', s.key);
    expect(await validate(s.key)).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' });
  });
});

describe('a plan change', () => {
  it('a plan change moves the licence to the other product, max_activations × quantity, license.updated; it takes the product’s entitlements', async () => {
    const s = await subscribed({ max_activations: 2 });
    const end = at(30 * DAY);
    await s.apply('created', {}, end, { quantity: 2 });
    const studio = r.product(account, { max_activations: 5, payment_grace_days: 3, entitlements: ['studio-export'] });
    const asking = (key: string) =>
      r.api.validateLicense(
        ValidateLicenseRequest.fromPartial({ account_id: account, key, entitlements: ['studio-export'] }),
      );
    expect(await asking(s.key)).toMatchObject({ valid: false, code: 'entitlements_missing' });
    // The same period: only the plan changes.
    await s.apply('updated', {}, end, { product_id: studio.id, quantity: 3 });
    const l = await licence(s.key);
    expect(l).toMatchObject({ product_id: studio.id, key: s.key });
    expect(l.policy?.max_activations).toBe(15);
    await events.waitFor(
      (e) =>
        e.type === 'license.updated' &&
        (e.data as { license: { key: string; product_id: string } }).license.product_id === studio.id,
    );
    expect(await asking(s.key)).toMatchObject({ valid: true, code: 'valid' });
  });
});
