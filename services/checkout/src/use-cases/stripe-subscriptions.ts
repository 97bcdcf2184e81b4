import { AppError, isId, type CallOptions } from '@licensing/runtime';
import type { GetProductRequest, Product, RefundCause } from '@licensing/proto';
import { addInterval, DAY_MS, planOf, QUANTITY_MAX, refundEffect, type Plan } from '../domain/subscription';
import type { StripeEventLike } from '../domain/stripe-events';
import {
  interpretSubscriptionEvent,
  periodChargeMismatch,
  type StripeSubscriptionAction,
} from '../domain/stripe-subscription-events';
import { PENDING_EVENT_DAYS, type SubscriptionDoc } from '../store/subscriptions';
import { subscriptionEvent } from '../events/subscription-events';
import type { WebhookOutcome } from './stripe-webhook';

type SubscriptionEventType = Parameters<typeof subscriptionEvent>[0];
import { subscriptionIdOf, syncLicense, type SubscriptionDeps } from './subscriptions';

// Stripe's subscription events: invoice.paid / invoice.payment_failed (renewals, failed payments and
// their recovery) and customer.subscription.created|updated|deleted (cancellation, unpaid, plan and
// seat changes). Each event is handled once (the webhook's claim on its id); each Stripe invoice is
// one invoice here (its id: a unique insert), so a repeated renewal renews once. An event about a
// subscription this service does not have yet (it came before checkout.session.completed) is kept
// and applied when the checkout starts the subscription.

export interface StripeSubscriptionDeps extends SubscriptionDeps {
  products: { getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product> };
}

type Doc = Omit<SubscriptionDoc, 'outbox'>;
const ok: WebhookOutcome = { status: 200, body: { received: true } };
const refuse = (message: string): WebhookOutcome => ({ status: 400, error: AppError.invalid('event', message) });

async function findFor(deps: SubscriptionDeps, a: StripeSubscriptionAction): Promise<Doc | null> {
  if (a.sessionId && isId('cs', a.sessionId)) {
    const byLink = await deps.subs.findById(subscriptionIdOf(a.sessionId));
    if (byLink) return byLink;
  }
  return a.providerSubscriptionId ? deps.subs.findByProvider(a.providerSubscriptionId) : null;
}

/** One change written (retried over a newer state) and told to the licence. */
async function change(
  deps: SubscriptionDeps,
  sub: Doc,
  decide: (d: Doc) => { changes: Partial<Doc>; event: SubscriptionEventType; change: string } | null,
  requestId: string,
): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const d = attempt === 0 ? sub : await deps.subs.findById(sub._id);
    if (!d) return;
    const step = decide(d);
    if (!step) return;
    const now = deps.clock.now();
    const after: Doc = { ...d, ...step.changes, seq: d.seq + 1, license_pending: true, last_change: step.change };
    const events = [subscriptionEvent(step.event, after, now)];
    if (await deps.subs.replace(d as SubscriptionDoc, { ...step.changes, last_change: step.change }, events)) {
      deps.outbox.flush(deps.subs.models.Subscription, d._id, events);
      await syncLicense(deps, after, requestId);
      return;
    }
  }
  throw new AppError('conflict', 'the subscription is being changed meanwhile; Stripe retries');
}

export async function applyStripeSubscriptionEvent(
  deps: StripeSubscriptionDeps,
  a: StripeSubscriptionAction,
  event: Pick<StripeEventLike, 'id'>,
  requestId = '',
): Promise<WebhookOutcome> {
  if (!a.providerSubscriptionId && !a.sessionId)
    return { status: 200, body: { received: true, ignored: 'a subscription this service did not create' } };
  const sub = await findFor(deps, a);
  if (!sub) {
    // Early (before the checkout that starts it), or about a subscription that is not ours at all: what
    // it means is kept (never Stripe's whole object) for PENDING_EVENT_DAYS, and applied if the checkout
    // that starts the subscription comes meanwhile.
    await deps.subs.keepPending({
      _id: event.id,
      provider_subscription_id: a.providerSubscriptionId,
      session_id: a.sessionId,
      created: a.created,
      action: a,
      expires_at: new Date(deps.clock.now().getTime() + PENDING_EVENT_DAYS * DAY_MS),
    });
    return ok;
  }
  if (sub.provider !== 'stripe') return refuse('the subscription is not paid through Stripe');
  if (a.livemode !== sub.livemode)
    return refuse(`a ${a.livemode ? 'live' : 'test'} event for a ${sub.livemode ? 'live' : 'test'} subscription`);
  return a.kind === 'invoice' ? invoice(deps, sub, a, requestId) : subscription(deps, sub, a, requestId);
}

/**
 * Its Stripe customer (the billing portal is opened for it), if the checkout did not tell it: written
 * once the event is accepted (a refused event writes nothing).
 */
async function rememberCustomer(deps: SubscriptionDeps, sub: Doc, a: StripeSubscriptionAction): Promise<void> {
  if (a.customerId && a.customerId !== sub.provider_customer_id) await deps.subs.setCustomer(sub._id, a.customerId);
}

async function invoice(
  deps: StripeSubscriptionDeps,
  sub: Doc,
  a: Extract<StripeSubscriptionAction, { kind: 'invoice' }>,
  requestId: string,
): Promise<WebhookOutcome> {
  if (!a.invoiceId) return refuse('an invoice without an id');
  if (a.currency && a.currency !== sub.currency) return refuse("the invoice's currency is not the subscription's");
  // A renewal bills the subscription's price × seats (judged by its period lines); the amount actually
  // paid is recorded as it is.
  const wrongCharge = periodChargeMismatch(a, sub.amount);
  if (wrongCharge) return refuse(wrongCharge);
  // An off-cycle invoice belongs to the period in force (its lines' periods are the prorated spans).
  const start = a.offCycle ? sub.current_period_start : (a.periodStart ?? sub.current_period_end);
  const end = a.offCycle
    ? sub.current_period_end
    : (a.periodEnd ?? addInterval(start, sub.interval, sub.interval_count));
  // A failure of a period older than the one in force (delivered late, its period renewed since) is stale.
  // (An off-cycle invoice is of the period in force: its failure is never an older period's.)
  const staleFailure = (d: Doc) =>
    !a.offCycle && end.getTime() <= d.current_period_end.getTime() && d.status !== 'trialing';
  if (!a.paid && staleFailure(sub))
    return {
      status: 200,
      body: { received: true, ignored: 'a failed payment of a period older than the current one' },
    };
  await rememberCustomer(deps, sub, a);
  const existing = await deps.subs.findInvoice(a.invoiceId);
  const record = (status: 'paid' | 'failed') =>
    deps.subs.addInvoice({
      _id: a.invoiceId,
      subscription_id: sub._id,
      account_id: sub.account_id,
      period: a.first ? 0 : a.offCycle ? sub.period_index : sub.period_index + 1,
      period_start: start,
      period_end: end,
      amount: a.amount ?? sub.amount,
      currency: sub.currency,
      status,
      created_at: deps.clock.now(),
      payment_id: a.paymentId,
      ...(a.first ? { first: true } : {}),
    });
  if (!a.paid) {
    if (existing?.status === 'paid') return ok; // a failure reported after the payment: stale
    if (!existing) await record('failed');
    if (sub.status === 'trialing' && !a.first && !a.offCycle) return trialEndedUnpaid(deps, sub, requestId);
    await change(
      deps,
      sub,
      (d) =>
        (d.status === 'active' || d.status === 'trialing') && !staleFailure(d)
          ? { changes: { status: 'past_due' }, event: 'subscription.past_due', change: 'past_due' }
          : null,
      requestId,
    );
    return ok;
  }
  if (existing?.status === 'paid') return ok; // this invoice was paid before: one renewal
  if (existing) await deps.subs.setInvoiceStatus(a.invoiceId, 'paid', a.paymentId);
  else if (!(await record('paid'))) return ok; // another delivery recorded it first
  if (a.first) return ok; // the checkout's own payment: the subscription started with it
  if (a.offCycle) return ok; // a proration paid (recorded above): the period in force stays as it is
  await change(
    deps,
    sub,
    (d) => {
      // An older period paid late changes nothing once a later one is in force.
      if (end.getTime() <= d.current_period_end.getTime() && d.status === 'active') return null;
      if (d.status === 'canceled') return null;
      return {
        changes: {
          status: 'active',
          current_period_start: start,
          current_period_end: end,
          trial_end: null,
          period_index: d.period_index + 1,
        },
        event: 'subscription.renewed',
        change: 'renewed',
      };
    },
    requestId,
  );
  return ok;
}

/**
 * A trial's first charge failed (invoice.payment_failed while trialing): the trial ended unpaid, and
 * the subscription ends now, as in test mode (a trial that ends unpaid expires its licence). Stripe
 * would keep the subscription past due and retry the charge (its own dunning settings), so it is
 * cancelled there first (nothing is recorded here unless Stripe stopped billing: a charge that
 * succeeded later would bill a customer whose licence expired). Then the subscription is `canceled`
 * (subscription.canceled), ended early: its licence expires now, without the policy's grace days.
 */
async function trialEndedUnpaid(deps: SubscriptionDeps, sub: Doc, requestId: string): Promise<WebhookOutcome> {
  await stopBillingNow(deps, sub, 'a subscription whose trial ended unpaid');
  await change(
    deps,
    sub,
    (d) =>
      d.status === 'trialing'
        ? {
            changes: {
              status: 'canceled',
              canceled_at: deps.clock.now(),
              license_ends_at: deps.clock.now(),
              ended_early: true,
            },
            event: 'subscription.canceled',
            change: 'canceled',
          }
        : null,
    requestId,
  );
  return ok;
}

/**
 * Cancels the subscription on Stripe now, so that Stripe charges nothing more for it. Refused (Stripe has
 * ended it already, or does not know it): nothing to stop there. Unreachable: thrown (503), Stripe retries
 * the event, and nothing is recorded here before Stripe stopped billing.
 */
async function stopBillingNow(deps: SubscriptionDeps, sub: Doc, what: string): Promise<void> {
  if (!sub.provider_subscription_id || !deps.provider.cancelSubscription) return;
  try {
    await deps.provider.cancelSubscription(sub.provider_subscription_id, false);
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'invalid_request')) throw err;
    deps.log.warn({ subscription: sub._id, err }, `Stripe refused to cancel ${what}`);
  }
}

export interface StripeRefundDeps extends StripeSubscriptionDeps {
  /**
   * Applies the product's refund_action to the licence of the checkout that started the subscription
   * (use-cases/completion.ts refund: once, as for a one-time purchase).
   */
  refundCheckout(sessionId: string, requestId: string): Promise<void>;
}

/**
 * A subscription's payment refunded in full or disputed (charge.refunded, charge.dispute.created);
 * null when no invoice of ours was paid with it (the one-time rules apply).
 *
 * - A renewal's or a proration's takes back one period's (or one change's) money, not the purchase: it
 *   is recorded on the invoice (the subscription's `refunds`), and the licence stays as it is. Stripe
 *   goes on billing the next periods; the vendor cancels the subscription if that is what was meant.
 * - The first payment's (the checkout's) takes back the purchase: the subscription is cancelled on
 *   Stripe first (nothing keeps billing a licence that cannot validate), the licence gets the product's
 *   refund_action, and the subscription ends here (canceled, early: no grace days).
 */
export async function applyStripeRefund(
  deps: StripeRefundDeps,
  a: { paymentId: string; livemode: boolean; cause: RefundCause },
  requestId = '',
): Promise<WebhookOutcome | null> {
  const inv = await deps.subs.invoiceOfPayment(a.paymentId);
  const sub = inv ? await deps.subs.findById(inv.subscription_id) : null;
  if (!inv || !sub) return null;
  if (sub.livemode !== a.livemode) return refuse('the refund and the payment differ in livemode');
  const { takesBackPurchase } = refundEffect(inv, sub, deps.clock.now());
  if (takesBackPurchase) {
    await stopBillingNow(deps, sub, 'a subscription whose first payment was taken back');
    await deps.refundCheckout(sub.session_id, requestId);
  }
  await deps.subs.markInvoiceRefunded(inv._id, { cause: a.cause, at: deps.clock.now() });
  deps.log.info(
    { subscription: sub._id, invoice: inv._id, cause: a.cause, first: takesBackPurchase },
    takesBackPurchase
      ? "a subscription's first payment was taken back: it ends"
      : "a subscription's invoice was taken back",
  );
  if (!takesBackPurchase) return ok;
  await change(
    deps,
    sub,
    (d) => {
      const now = deps.clock.now();
      const step = refundEffect(inv, d, now).step;
      if (!step) return null;
      const { ended: _ended, ...changes } = step.changes;
      return { changes: { ...changes, license_ends_at: now } as Partial<Doc>, event: step.event, change: step.change };
    },
    requestId,
  );
  return ok;
}

async function subscription(
  deps: StripeSubscriptionDeps,
  sub: Doc,
  a: Extract<StripeSubscriptionAction, { kind: 'subscription' }>,
  requestId: string,
): Promise<WebhookOutcome> {
  if (a.created && a.created < (sub.provider_updated_at ?? 0)) return ok; // older than what was applied
  if (a.deleted || a.status === 'canceled') {
    await rememberCustomer(deps, sub, a);
    await change(
      deps,
      sub,
      (d) =>
        d.status === 'canceled'
          ? null
          : {
              changes: {
                status: 'canceled',
                canceled_at: deps.clock.now(),
                license_ends_at: deps.clock.now(),
                // Ended at its period end (cancel_at_period_end, ours or Stripe's) keeps the policy's
                // grace days; cancelled now on Stripe does not.
                ended_early: !(d.cancel_at_period_end || a.cancelAtPeriodEnd),
                provider_updated_at: a.created,
              },
              event: 'subscription.canceled',
              change: 'canceled',
            },
      requestId,
    );
    return ok;
  }
  const quantity = a.quantity ?? sub.quantity;
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > QUANTITY_MAX)
    return refuse(`quantity must be from 1 to ${QUANTITY_MAX}`);
  // A plan change: the product must be one of this account's with a recurring price, read (the product
  // service's gRPC) and checked before anything is written; its price is what later invoices must match.
  let productId = sub.product_id;
  let plan: Plan | null = null;
  if (a.productId && a.productId !== sub.product_id) {
    if (!isId('prod', a.productId)) return refuse('the plan names no product of ours');
    let product: Product;
    try {
      product = await deps.products.getProduct({ account_id: sub.account_id, id: a.productId }, { requestId });
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found')
        return refuse("a plan change to a product that is not this account's");
      throw err;
    }
    const read = planOf(product, quantity);
    if (typeof read === 'string') return refuse(read);
    productId = a.productId;
    plan = read;
  }
  await rememberCustomer(deps, sub, a);
  await change(
    deps,
    sub,
    (d) => {
      const changes: Partial<Doc> = { provider_updated_at: a.created };
      let kind: 'updated' | 'unpaid' = 'updated';
      if (a.cancelAtPeriodEnd !== d.cancel_at_period_end) changes.cancel_at_period_end = a.cancelAtPeriodEnd;
      if (plan && productId !== d.product_id) {
        // The new plan's price, currency and interval (and its policy's payment grace), for every seat.
        Object.assign(changes, plan, { product_id: productId });
        if (quantity !== d.quantity) changes.quantity = quantity;
      } else if (quantity !== d.quantity) {
        changes.quantity = quantity;
        changes.amount = Math.round((d.amount / d.quantity) * quantity);
      }
      if (a.status === 'unpaid' && d.status !== 'unpaid') {
        changes.status = 'unpaid';
        kind = 'unpaid';
      }
      if (a.status === 'trialing' && a.trialEnd && d.status === 'trialing') changes.trial_end = a.trialEnd;
      if (Object.keys(changes).length === 1) return null; // nothing of ours changed
      return { changes, event: 'subscription.updated', change: kind };
    },
    requestId,
  );
  return ok;
}

/** After a Stripe subscription starts: the events that came before it, in Stripe's order. */
export async function applyPending(deps: StripeSubscriptionDeps, sub: Doc, requestId = ''): Promise<void> {
  for (const p of await deps.subs.pendingFor(sub.provider_subscription_id ?? '', sub.session_id)) {
    // (Kept before only the action was: the whole event, read again.)
    const a = p.action ?? (p.event ? interpretSubscriptionEvent(p.event as unknown as StripeEventLike) : null);
    if (a) {
      const out = await applyStripeSubscriptionEvent(deps, a, { id: p._id }, requestId);
      if (out.status !== 200)
        deps.log.warn({ stripe_event: p._id, error: out.error.message }, 'an early Stripe event was refused');
    }
    await deps.subs.dropPending(p._id);
  }
}
