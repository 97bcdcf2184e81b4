import { createHash } from 'node:crypto';
import { AppError, isId, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import { interpretStripeEvent, mismatch, type StripeAction, type StripeEventLike } from '../domain/stripe-events';
import { interpretSubscriptionEvent, type StripeSubscriptionAction } from '../domain/stripe-subscription-events';
import { checkoutExpired } from '../events/checkout-events';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore } from '../store/queries';
import type { Completion } from './completion';

/** A verified delivery: the event, and the signing time (seconds) its signature was made for. */
export interface VerifiedEvent {
  event: StripeEventLike;
  signedAt: number;
}

export interface WebhookVerifier {
  /** The event if Stripe signed these exact bytes within the tolerance; otherwise null. */
  verify(rawBody: Buffer, signature: string): VerifiedEvent | null;
}

export type WebhookOutcome =
  | { status: 200; body: { received: true; duplicate?: true; ignored?: string } }
  | { status: 400 | 404 | 409; error: AppError };

/** How long one delivery may hold an event before another takes it over (its handler died). */
export const EVENT_LEASE_MS = 30_000;
/**
 * How long a delivery waits for another delivery of the same event to finish, then 409 (Stripe
 * retries): longer than a handling takes (its calls have 5 s deadlines), within the gateway's 20 s.
 */
export const BUSY_WAIT_MS = 10_000;
const BUSY_WAIT_STEP_MS = 50;

/**
 * A Stripe webhook delivery, end to end. Exactly once rests on three things
 * that hold under any number of concurrent or repeated deliveries:
 * - the session moves to complete with one conditional write whose repeats
 *   change nothing that matters (same payment, same values);
 * - the licence is created through the licence service with the idempotency
 *   key checkout:<session id> (a unique insert there): one licence;
 * - checkout.completed has the id evt_completed_<session id>, and JetStream
 *   drops a second message with the same Nats-Msg-Id: one event.
 * On top of that the event id is what counts, whatever the bytes or the
 * signature of a delivery: one delivery claims the event (a unique insert on
 * its id) and handles it; a delivery of an event handled before does nothing,
 * one that arrives while another handles it waits for that to finish; a claim
 * whose handling failed is dropped, so Stripe's retry handles it. The same
 * event signed at the same time again (a replay, however its header or body
 * were rewritten) is refused outright.
 */
export class StripeWebhook {
  constructor(
    private readonly verifier: WebhookVerifier,
    private readonly store: CheckoutStore,
    private readonly completion: Completion,
    private readonly outbox: Pick<Outbox, 'flush'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly busyWaitMs = BUSY_WAIT_MS,
    /**
     * A refund or dispute of a subscription's invoice payment (use-cases/stripe-subscriptions.ts
     * applyStripeRefund); null when no invoice of ours was paid with it.
     */
    private readonly subscriptionRefund?: (
      a: Extract<StripeAction, { kind: 'refunded' }>,
      requestId: string,
    ) => Promise<WebhookOutcome | null>,
    /** Subscription events (use-cases/stripe-subscriptions.ts). */
    private readonly subscriptions?: (
      a: StripeSubscriptionAction,
      event: StripeEventLike,
      requestId: string,
    ) => Promise<WebhookOutcome>,
  ) {}

  async receive(rawBody: Buffer, signature: string, requestId = ''): Promise<WebhookOutcome> {
    const verified = signature ? this.verifier.verify(rawBody, signature) : null;
    if (!verified)
      return {
        status: 400,
        error: new AppError(
          'invalid_request',
          'the Stripe-Signature header does not sign this body with our endpoint secret within 300 seconds',
        ),
      };
    const { event, signedAt } = verified;
    const delivery = createHash('sha256').update(`${event.id}\n${signedAt}`).digest('hex');
    if (!(await this.store.claimDelivery(delivery, this.clock.now()))) {
      return {
        status: 409,
        error: new AppError(
          'conflict',
          'this signed delivery was already received: a replay is refused (Stripe signs every retry anew)',
        ),
      };
    }
    const claim = await this.claim(event.id);
    if (claim === 'handled') return { status: 200, body: { received: true, duplicate: true } };
    if (claim === 'busy')
      return {
        status: 409,
        error: new AppError('conflict', 'another delivery of this event is being handled; Stripe retries it'),
      };
    const action = interpretStripeEvent(event);
    const subscription = this.subscriptions ? interpretSubscriptionEvent(event) : null;
    let outcome: WebhookOutcome;
    try {
      outcome =
        subscription && this.subscriptions
          ? await this.subscriptions(subscription, event, requestId)
          : await this.act(action, requestId);
      if (outcome.status === 200 && subscription?.kind === 'invoice' && subscription.paid)
        outcome = await this.refundBeforeInvoice(subscription, outcome, requestId);
    } catch (err) {
      await this.store.releaseEvent(event.id, claim.until);
      throw err;
    }
    if (outcome.status === 200)
      await this.store.finishEvent(
        event.id,
        event.type,
        'sessionId' in action ? action.sessionId : '',
        this.clock.now(),
      );
    else await this.store.releaseEvent(event.id, claim.until);
    this.log.info(
      {
        stripe_event: event.id,
        type: event.type,
        outcome: outcome.status === 200 ? (outcome.body.ignored ? 'ignored' : 'handled') : outcome.error.message,
      },
      'stripe webhook',
    );
    return outcome;
  }

  /**
   * An invoice's payment that was refunded or disputed before the invoice was recorded (events come in
   * any order): the refund, kept then, applies now by the subscription's rules.
   */
  private async refundBeforeInvoice(
    invoice: Extract<StripeSubscriptionAction, { kind: 'invoice' }>,
    outcome: WebhookOutcome,
    requestId: string,
  ): Promise<WebhookOutcome> {
    if (!this.subscriptionRefund || !invoice.paymentId) return outcome;
    const pending = await this.store.pendingRefund(invoice.paymentId);
    if (!pending) return outcome;
    const refund = { kind: 'refunded' as const, paymentId: invoice.paymentId, livemode: invoice.livemode };
    const applied = await this.subscriptionRefund({ ...refund, cause: pending.cause ?? 'refund' }, requestId);
    // Refused (the refund's livemode is not the payment's): the invoice stands as recorded.
    if (applied && applied.status !== 200)
      this.log.warn({ payment: invoice.paymentId, error: applied.error.message }, 'a refund kept early was refused');
    return outcome;
  }

  /** This delivery's claim on the event, or why it has none (after waiting out another delivery of it). */
  private async claim(eventId: string): Promise<{ until: Date } | 'handled' | 'busy'> {
    for (let step = 0; ; step++) {
      const now = this.clock.now();
      const until = new Date(now.getTime() + EVENT_LEASE_MS);
      const claim = await this.store.claimEvent(eventId, now, until);
      if (claim === 'claimed') return { until };
      if (claim === 'handled' || step * BUSY_WAIT_STEP_MS >= this.busyWaitMs) return claim;
      await new Promise((r) => setTimeout(r, BUSY_WAIT_STEP_MS));
    }
  }

  private async act(a: StripeAction, requestId: string): Promise<WebhookOutcome> {
    const ok = { status: 200 as const, body: { received: true as const } };
    switch (a.kind) {
      case 'ignored':
        return { status: 200, body: { received: true, ignored: a.reason } };
      case 'paid':
      case 'awaiting_payment':
      case 'expired': {
        const s = await this.session(a.sessionId);
        if (!s)
          return {
            status: 404,
            error: new AppError('not_found', 'the checkout session named by this Stripe event is unknown'),
          };
        const wrong = mismatch(s, a);
        if (wrong) return { status: 400, error: new AppError('invalid_request', wrong) };
        if (a.kind === 'awaiting_payment') return ok;
        if (a.kind === 'expired') {
          const now = this.clock.now();
          if (s.status === 'open' && (await this.store.markExpired(s._id, checkoutExpired(s, now))))
            this.outbox.flush(this.store.models.Session, s._id);
          return ok;
        }
        if (s.recurring && !a.providerSubscriptionId)
          return {
            status: 400,
            error: new AppError('invalid_request', 'a subscription checkout completed without a Stripe subscription'),
          };
        if (s.status !== 'complete')
          await this.completion.markPaid(s, {
            paymentId: a.paymentId,
            email: a.email,
            paidWith: null,
            evenIfExpired: true,
            providerSubscriptionId: a.providerSubscriptionId || undefined,
            providerCustomerId: a.customerId || undefined,
          });
        const paid = await this.session(s._id);
        if (paid?.status !== 'complete')
          throw new AppError('service_unavailable', 'the payment could not be recorded; Stripe will retry');
        await this.completion.issue(paid, requestId);
        return ok;
      }
      case 'refunded': {
        // A subscription's payment (an invoice's) has rules of its own: only the first payment's revokes.
        const bySubscription = this.subscriptionRefund ? await this.subscriptionRefund(a, requestId) : null;
        if (bySubscription) return bySubscription;
        const s = await this.store.findByPayment(a.paymentId);
        if (!s) {
          // Not (yet) one of our payments: kept, in case its completion is still on the way.
          await this.store.addPendingRefund(a.paymentId, this.clock.now(), a.cause);
          const late = await this.store.findByPayment(a.paymentId);
          if (late?.license_key) await this.completion.refund(late, requestId);
          return ok;
        }
        if (s.livemode !== a.livemode)
          return {
            status: 400,
            error: new AppError('invalid_request', 'the refund and the payment differ in livemode'),
          };
        await this.completion.refund(s, requestId);
        // The licence may have been recorded between the two reads: look once more.
        if (!s.license_key) {
          const now = await this.store.findById(s._id);
          if (now?.license_key) await this.completion.refund(now, requestId);
        }
        return ok;
      }
    }
  }

  private session(id: string): Promise<SessionDoc | null> {
    return isId('cs', id) ? this.store.findById(id) : Promise.resolve(null);
  }
}
