import { createHash, randomBytes } from 'node:crypto';
import { AppError, isId, type CallOptions, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import {
  isOneOf,
  subscriptionStatuses,
  type ApplySubscriptionRequest,
  type License,
  type PageRequest,
} from '@licensing/proto';
import type { PaymentProvider } from '../domain/payments';
import {
  addInterval,
  cardPaymentsWhenGiven,
  checkAdvanceTo,
  DAY_MS,
  ended,
  failed,
  graceUntil,
  nextStep,
  paid,
  portalReturnUrl,
  STRIPE_PORTAL_MS,
  testCardOf,
  testChargePays,
  unpaid,
  type StepResult,
  type TestCard,
} from '../domain/subscription';
import { subscriptionEvent } from '../events/subscription-events';
import type { SessionDoc } from '../store/models';
import type { InvoiceDoc, SubscriptionDoc, SubscriptionFilter, SubscriptionStore } from '../store/subscriptions';

// Subscriptions: started by a paid recurring checkout, moved by the test clock (test mode), cancelled
// through the API, paid again through the billing portal. Every change is one conditional write of the
// subscription with its event (outbox), then told to the licence service (ApplySubscription), which
// the subscription's licence follows; a call that fails is told again by the sweep (license_pending).

export interface SubscriptionLicenses {
  applySubscription(req: ApplySubscriptionRequest, opts?: CallOptions): Promise<License>;
}

export interface SubscriptionDeps {
  subs: SubscriptionStore;
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
  licenses: SubscriptionLicenses;
  provider: Pick<PaymentProvider, 'name'> & {
    /** Stripe: cancels its subscription (at the period end, or now). */
    cancelSubscription?(providerSubscriptionId: string, atPeriodEnd: boolean): Promise<void>;
    /** Stripe: a session of its billing portal for the customer. */
    billingPortal?(customerId: string, returnUrl: string): Promise<{ url: string }>;
  };
  /** The checkout sessions (Stripe's billing portal returns to the vendor's success_url of the subscription's checkout). */
  sessions?: { findById(id: string): Promise<{ success_url: string } | null> };
  /** PUBLIC_BASE_URL without a trailing slash. */
  baseUrl: string;
  log: Logger;
}

type Change = ApplySubscriptionRequest['change'];
type Doc = Omit<SubscriptionDoc, 'outbox'>;

/** A session's subscription: the same ULID, so one session starts one subscription. */
export const subscriptionIdOf = (sessionId: string) => `sub_${sessionId.slice(3)}`;
const invoiceId = (subscriptionId: string, period: number) => `in_${subscriptionId.slice(4)}_${period}`;
/** A test-mode billing portal link lasts an hour. */
export const PORTAL_LINK_MS = 3_600_000;
const digest = (token: string) => createHash('sha256').update(token).digest('hex');
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '');

/** What the licence is told: its expiry, and the facts its answers show (proto/rules/status.ts). */
export function licenseState(s: Doc, now: Date): ApplySubscriptionRequest {
  const expires =
    s.status === 'canceled'
      ? (s.license_ends_at ?? now)
      : s.status === 'trialing'
        ? (s.trial_end ?? s.current_period_end)
        : s.current_period_end;
  return {
    account_id: s.account_id,
    key: s.license_key,
    subscription: {
      id: s._id,
      status: s.status,
      trial_end: s.status === 'trialing' ? iso(s.trial_end) : '',
      paid_through: iso(s.status === 'canceled' ? expires : s.current_period_end),
      grace_until: s.status === 'past_due' ? iso(graceUntil(s)) : '',
      ended_early: s.status === 'canceled' && !!s.ended_early,
    },
    expires_at: expires.toISOString(),
    product_id: s.product_id,
    quantity: s.quantity,
    seq: s.seq,
    change: s.last_change || 'updated',
  };
}

/** Tells the licence the subscription's state; a failure is left to the sweep (the state is stored). */
export async function syncLicense(deps: SubscriptionDeps, s: Doc, requestId = ''): Promise<void> {
  const license = await deps.licenses.applySubscription(licenseState(s, deps.clock.now()), { requestId });
  // A reroll gave the licence another key: the licence service still finds it by the old one, and the
  // subscription shows the new one from now on.
  await deps.subs.licenseApplied(s._id, s.seq, license.key && license.key !== s.license_key ? license.key : undefined);
}

async function syncQuietly(deps: SubscriptionDeps, s: Doc, requestId: string): Promise<void> {
  try {
    await syncLicense(deps, s, requestId);
  } catch (err) {
    deps.log.warn({ err, subscription: s._id }, 'could not update the licence of a subscription; the sweep retries');
  }
}

/** The sweep: licences that missed their subscription's last state are told again. */
export async function syncPendingLicenses(deps: SubscriptionDeps): Promise<number> {
  let n = 0;
  for (const s of await deps.subs.licenseBehind(50)) {
    await syncQuietly(deps, s, '');
    n++;
  }
  return n;
}

/**
 * The sweep: a Stripe subscription past due beyond its payment grace becomes unpaid (its licence
 * suspended, `subscription_unpaid`), whether or not Stripe says so (its own retry settings may keep it
 * past due, or cancel it later: a later event still applies). One cancelled at its period end ends
 * instead. Test-mode subscriptions move only with their test clock.
 */
export async function markUnpaidPastGrace(deps: SubscriptionDeps, limit = 50): Promise<number> {
  const now = deps.clock.now();
  let n = 0;
  for (const s of await deps.subs.pastDueWithoutClock(limit)) {
    if (graceUntil(s).getTime() > now.getTime()) continue;
    const result = s.cancel_at_period_end ? ended(graceUntil(s)) : unpaid();
    const { ended: _ended, ...changes } = result.changes;
    const extra: Partial<Doc> = result.change === 'canceled' ? { license_ends_at: now } : {};
    const after = await write(deps, s, { ...changes, ...extra } as Partial<Doc>, result.event, result.change);
    if (!after) continue; // changed meanwhile (a payment arrived): the next pass looks again
    await syncQuietly(deps, after, '');
    n++;
  }
  return n;
}

/**
 * A paid recurring session starts its subscription (once: its id is the session's) and the licence
 * follows it. Throws when the licence could not be told: the completion is then finished again later.
 */
export async function startSubscription(
  deps: SubscriptionDeps,
  s: SessionDoc,
  licenseKey: string,
  requestId: string,
): Promise<Doc> {
  const r = s.recurring!;
  const id = subscriptionIdOf(s._id);
  let doc: Doc | null = await deps.subs.findById(id);
  if (!doc) {
    const now = s.paid_at ?? deps.clock.now();
    const trialEnd = r.trial_days > 0 ? new Date(now.getTime() + r.trial_days * DAY_MS) : null;
    const fresh: Doc = {
      _id: id,
      account_id: s.account_id,
      product_id: s.product_id,
      session_id: s._id,
      customer_email: s.customer_email,
      customer_email_lc: s.customer_email.toLowerCase(),
      license_key: licenseKey,
      quantity: s.quantity ?? 1,
      status: trialEnd ? 'trialing' : 'active',
      interval: r.interval,
      interval_count: r.interval_count,
      amount: r.amount,
      currency: s.currency,
      current_period_start: now,
      current_period_end: trialEnd ?? addInterval(now, r.interval, r.interval_count),
      period_index: 0,
      cancel_at_period_end: false,
      trial_end: trialEnd,
      canceled_at: null,
      license_ends_at: null,
      ended_early: false,
      payment_grace_days: r.payment_grace_days,
      livemode: s.livemode,
      provider: s.provider,
      provider_subscription_id: s.provider_subscription_id ?? '',
      provider_customer_id: s.provider_customer_id ?? '',
      provider_updated_at: 0,
      test_clock: s.provider === 'test' ? now : null,
      test_card: (s.test_card as TestCard | null) ?? null,
      // A trial's checkout charges nothing: with 0341 its first charge, at the trial's end, fails.
      card_payments: cardPaymentsWhenGiven((s.test_card as TestCard | null) ?? null, !trialEnd),
      seq: 1,
      license_pending: true,
      created_at: now,
      last_change: 'created',
    };
    if (await deps.subs.insert(fresh, [subscriptionEvent('subscription.created', fresh, now)])) {
      // Test mode bills here; Stripe's first invoice arrives as invoice.paid (subscription_create).
      if (s.provider === 'test')
        await deps.subs.addInvoice({
          _id: invoiceId(id, 0),
          subscription_id: id,
          account_id: s.account_id,
          period: 0,
          period_start: fresh.current_period_start,
          period_end: fresh.current_period_end,
          amount: trialEnd ? 0 : r.amount,
          currency: s.currency,
          status: 'paid',
          created_at: now,
        });
      deps.outbox.flush(deps.subs.models.Subscription, id);
    }
    doc = (await deps.subs.findById(id)) ?? fresh;
  }
  if (doc.license_pending) await syncLicense(deps, doc, requestId);
  return doc;
}

/** Writes one step with its event; null when another writer moved the subscription first. */
async function write(
  deps: SubscriptionDeps,
  before: Doc,
  changes: Partial<Doc>,
  event: StepResult['event'],
  change: Change,
): Promise<Doc | null> {
  const now = deps.clock.now();
  const after: Doc = { ...before, ...changes, seq: before.seq + 1, license_pending: true, last_change: change };
  const events = [subscriptionEvent(event, after, now)];
  if (!(await deps.subs.replace(before as SubscriptionDoc, { ...changes, last_change: change }, events))) return null;
  deps.outbox.flush(deps.subs.models.Subscription, before._id, events);
  return after;
}

async function own(deps: SubscriptionDeps, accountId: string, id: string): Promise<Doc> {
  if (!isId('sub', id)) throw AppError.invalid('id', 'id must be a subscription id (sub_…)');
  const doc = await deps.subs.find(accountId, id);
  if (!doc) throw AppError.notFound('subscription');
  return doc;
}

export async function getSubscription(
  deps: SubscriptionDeps,
  accountId: string,
  id: string,
): Promise<{ doc: Doc; invoices: InvoiceDoc[] }> {
  const doc = await own(deps, accountId, id);
  return { doc, invoices: await deps.subs.invoices(doc._id) };
}

export function listSubscriptions(
  deps: SubscriptionDeps,
  accountId: string,
  filter: SubscriptionFilter,
  page: PageRequest | undefined,
) {
  if (filter.status && !isOneOf(subscriptionStatuses, filter.status))
    throw AppError.invalid('status', `status must be one of ${subscriptionStatuses.join(', ')}`);
  if (filter.product_id && !isId('prod', filter.product_id))
    throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
  return deps.subs.list(accountId, filter, page);
}

/** Retries a decision over the latest state when another writer got there first. */
async function changeWith(
  deps: SubscriptionDeps,
  accountId: string,
  id: string,
  decide: (doc: Doc) => { changes: Partial<Doc>; event: StepResult['event']; change: Change } | null,
  requestId: string,
): Promise<Doc> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const doc = await own(deps, accountId, id);
    const step = decide(doc);
    if (!step) return doc;
    const after = await write(deps, doc, step.changes, step.event, step.change);
    if (after) {
      await syncQuietly(deps, after, requestId);
      return after;
    }
  }
  throw new AppError('conflict', 'the subscription is being changed by another request; retry');
}

/** Cancel at the period end (valid until then) or now (the licence expires now). 409 once canceled. */
export async function cancelSubscription(
  deps: SubscriptionDeps,
  accountId: string,
  id: string,
  atPeriodEnd: boolean,
  requestId = '',
): Promise<Doc> {
  const current = await own(deps, accountId, id);
  if (current.status === 'canceled') throw new AppError('conflict', 'the subscription is canceled already');
  // Stripe's side first: nothing is recorded here unless Stripe stopped billing. A past-due or unpaid
  // subscription ends now whatever was asked (its period is over): so it does on Stripe too, or Stripe's
  // retries could still charge for a licence that has ended.
  const endsNow = !atPeriodEnd || (current.status !== 'active' && current.status !== 'trialing');
  if (current.provider === 'stripe' && current.provider_subscription_id && deps.provider.cancelSubscription)
    await deps.provider.cancelSubscription(current.provider_subscription_id, !endsNow);
  return changeWith(
    deps,
    accountId,
    id,
    (doc) => {
      if (doc.status === 'canceled') throw new AppError('conflict', 'the subscription is canceled already');
      if (atPeriodEnd && (doc.status === 'active' || doc.status === 'trialing')) {
        if (doc.cancel_at_period_end) return null; // asked again: nothing changes
        return { changes: { cancel_at_period_end: true }, event: 'subscription.updated', change: 'updated' };
      }
      // Now; and a past-due or unpaid subscription, whose period has ended already, at once. Ended
      // early: the licence expires now, without the policy's grace days (proto/rules/status.ts).
      const now = deps.clock.now();
      const at = doc.test_clock && doc.test_clock.getTime() > now.getTime() ? doc.test_clock : now;
      return {
        changes: { status: 'canceled', canceled_at: at, license_ends_at: now, ended_early: true },
        event: 'subscription.canceled',
        change: 'canceled',
      };
    },
    requestId,
  );
}

/**
 * Test mode: moves the subscription's clock to `rawTo`, billing each period end passed with the test
 * card on file. Each period has one invoice (a unique insert): two calls that meet bill it once, and
 * the one that loses takes the invoice's result.
 */
export async function advanceTestClock(
  deps: SubscriptionDeps,
  accountId: string,
  id: string,
  rawTo: string,
  requestId = '',
): Promise<Doc> {
  if (deps.provider.name === 'stripe')
    throw AppError.notFound('test clock (PAYMENT_PROVIDER=stripe: use Stripe test clocks)');
  let doc = await own(deps, accountId, id);
  if (doc.livemode || !doc.test_clock)
    throw new AppError('conflict', 'this subscription is live: it has no test clock');
  const to = checkAdvanceTo(rawTo, doc.test_clock);
  for (let steps = 0; steps < 500; steps++) {
    const step = nextStep(doc, to);
    if (!step) break;
    let result: StepResult;
    const extra: Partial<Doc> = { test_clock: step.at };
    if (step.kind === 'bill') {
      let pays = testChargePays(doc.test_card, doc.card_payments);
      const invoice: InvoiceDoc = {
        _id: invoiceId(doc._id, step.period),
        subscription_id: doc._id,
        account_id: doc.account_id,
        period: step.period,
        period_start: step.at,
        period_end: addInterval(step.at, doc.interval, doc.interval_count),
        amount: doc.amount,
        currency: doc.currency,
        status: pays ? 'paid' : 'failed',
        created_at: deps.clock.now(),
      };
      if (!(await deps.subs.addInvoice(invoice))) pays = (await deps.subs.findInvoice(invoice._id))?.status === 'paid';
      result = pays ? paid(doc, step.at, step.period) : failed(doc, step.at);
      if (pays) extra.card_payments = doc.card_payments + 1;
      if (result.change === 'canceled') extra.license_ends_at = deps.clock.now();
    } else if (step.kind === 'end') {
      result = ended(step.at);
      extra.license_ends_at = deps.clock.now();
    } else result = unpaid();
    const { ended: _ended, ...changes } = result.changes;
    const after = await write(deps, doc, { ...changes, ...extra } as Partial<Doc>, result.event, result.change);
    doc = after ?? (await own(deps, accountId, id));
  }
  if (!doc.test_clock || doc.test_clock.getTime() < to.getTime()) {
    await deps.subs.setClock(doc._id, doc.seq, to);
    doc = { ...doc, test_clock: to };
  }
  if (doc.license_pending) await syncQuietly(deps, doc, requestId);
  return doc;
}

/**
 * Where the customer updates their card: a one-hour link to the test-mode page, or a session of
 * Stripe's billing portal for the subscription's Stripe customer.
 */
export async function createBillingPortal(
  deps: SubscriptionDeps,
  accountId: string,
  id: string,
): Promise<{ url: string; expires_at: Date }> {
  const doc = await own(deps, accountId, id);
  if (doc.status === 'canceled')
    throw new AppError('conflict', 'the subscription is canceled: there is nothing to pay');
  if (doc.provider === 'stripe') {
    if (!doc.provider_customer_id)
      throw new AppError(
        'conflict',
        "this subscription's Stripe customer is not known yet (Stripe has not told it: its next subscription event will), so Stripe's billing portal cannot be opened for it",
      );
    if (!deps.provider.billingPortal)
      throw new AppError(
        'service_unavailable',
        "Stripe's billing portal is not available (PAYMENT_PROVIDER is not stripe)",
      );
    const session = deps.sessions ? await deps.sessions.findById(doc.session_id) : null;
    const returnUrl = portalReturnUrl(session?.success_url, deps.baseUrl, doc.session_id);
    const { url } = await deps.provider.billingPortal(doc.provider_customer_id, returnUrl);
    return { url, expires_at: new Date(deps.clock.now().getTime() + STRIPE_PORTAL_MS) };
  }
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(deps.clock.now().getTime() + PORTAL_LINK_MS);
  await deps.subs.addPortalLink(digest(token), doc._id, expiresAt);
  return { url: `${deps.baseUrl}/checkout/${doc.session_id}/billing/${token}`, expires_at: expiresAt };
}

/** The test-mode billing portal's subscription for a link, or null (unknown, expired, or another session's). */
export async function portalSubscription(
  deps: SubscriptionDeps,
  sessionId: string,
  token: string,
): Promise<Doc | null> {
  const link = await deps.subs.portalLink(digest(token), deps.clock.now());
  if (!link) return null;
  const doc = await deps.subs.findById(link.subscription_id);
  return doc && doc.session_id === sessionId ? doc : null;
}

/**
 * The customer gives a new test card. A past-due or unpaid subscription is charged at once: the
 * failed period's invoice is paid, the subscription is active again with the next period, and its
 * licence is reinstated and renewed.
 */
export async function updateCard(
  deps: SubscriptionDeps,
  sub: Doc,
  card: string,
  requestId = '',
): Promise<{ ok: boolean; message: string; doc: Doc }> {
  const kind = testCardOf(card);
  if (!kind)
    return {
      ok: false,
      message:
        'Test mode: use the card 4242 4242 4242 4242 (or 4000 0000 0000 0341, which pays only a charge made now: later charges fail).',
      doc: sub,
    };
  const doc = await changeWith(
    deps,
    sub.account_id,
    sub._id,
    (d) => {
      if (d.status === 'canceled') throw new AppError('conflict', 'the subscription is canceled');
      if (d.status !== 'past_due' && d.status !== 'unpaid')
        return {
          changes: { test_card: kind, card_payments: cardPaymentsWhenGiven(kind, false) },
          event: 'subscription.updated',
          change: 'updated',
        };
      const period = d.period_index + 1;
      const result = paid(d, d.current_period_end, period);
      return {
        changes: { ...result.changes, test_card: kind, card_payments: 1 },
        event: result.event,
        change: result.change,
      };
    },
    requestId,
  );
  if (doc.last_change === 'renewed') {
    const id = invoiceId(doc._id, doc.period_index);
    const added = await deps.subs.addInvoice({
      _id: id,
      subscription_id: doc._id,
      account_id: doc.account_id,
      period: doc.period_index,
      period_start: doc.current_period_start,
      period_end: doc.current_period_end,
      amount: doc.amount,
      currency: doc.currency,
      status: 'paid',
      created_at: deps.clock.now(),
    });
    if (!added) await deps.subs.setInvoiceStatus(id, 'paid');
  }
  return { ok: true, message: 'Your card was updated.', doc };
}
