import { AppError, type CallOptions, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import {
  DEFAULT_POLICY,
  type CreateLicenseRequest,
  type License,
  type TransitionLicenseRequest,
} from '@licensing/proto';
import { checkoutCompleted } from '../events/checkout-events';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore, PaymentRecord } from '../store/queries';
import { subscriptionIdOf } from './subscriptions';

/** How long a paid session is left to the request that took the payment before the sweeper finishes it. */
export const PAID_GRACE_MS = 10_000;

export interface LicenseIssuer {
  createLicense(req: CreateLicenseRequest, opts?: CallOptions): Promise<License>;
  transitionLicense(req: TransitionLicenseRequest, opts?: CallOptions): Promise<License>;
}

/**
 * Completion, exactly once. Payment marks the session complete (one
 * conditional write); the licence is then created through the licence
 * service with the session id as idempotency key, so however many tabs,
 * clicks or sweeper passes get here, one licence exists; the session then
 * records the key, with checkout.completed (one id per session) in the same
 * write. A crash between payment and issuance is finished by the sweeper.
 */
export class Completion {
  constructor(
    private readonly store: CheckoutStore,
    private readonly licenses: LicenseIssuer,
    private readonly outbox: Pick<Outbox, 'flush'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** A paid recurring session starts its subscription (use-cases/subscriptions.ts) before it records the licence. */
    private readonly startSubscription?: (s: SessionDoc, licenseKey: string, requestId: string) => Promise<void>,
  ) {}

  /** Records the payment. False if the session was no longer open (paid by another tab, or expired). */
  markPaid(s: SessionDoc, p: PaymentRecord): Promise<boolean> {
    return this.store.markPaid(s._id, p, this.clock.now());
  }

  /** Issues (or finds) the licence of a paid session and records it. Safe to call any number of times. */
  async issue(s: SessionDoc, requestId = ''): Promise<string> {
    if (s.license_key) return s.license_key;
    let license: License | undefined;
    for (let attempt = 0; !license; attempt++) {
      try {
        license = await this.licenses.createLicense(
          {
            account_id: s.account_id,
            product_id: s.product_id,
            customer_email: s.customer_email,
            idempotency_key: `checkout:${s._id}`,
            // The purchase mail is checkout.completed's (and the product's email_on_purchase).
            send_email: false,
            // A recurring checkout's licence is bound to the subscription it starts (and follows no other).
            ...(s.recurring ? { subscription_id: subscriptionIdOf(s._id) } : {}),
          },
          { requestId },
        );
      } catch (err) {
        // Another tab is issuing this very licence right now: wait for its answer.
        if (err instanceof AppError && err.code === 'conflict' && attempt < 20)
          await new Promise((r) => setTimeout(r, 100));
        else throw err;
      }
    }
    if (s.recurring && this.startSubscription) await this.startSubscription(s, license.key, requestId);
    const event = checkoutCompleted(s, license.key, this.clock.now());
    if (await this.store.recordLicense(s._id, license.key, event)) this.outbox.flush(this.store.models.Session, s._id);
    // A refund that arrived before this completion (events come in any order) applies now.
    if (s.payment_id && !s.refunded_at && (await this.store.hasPendingRefund(s.payment_id)))
      await this.refund({ ...s, license_key: license.key }, requestId);
    return license.key;
  }

  /**
   * A payment refunded in full, or disputed (a chargeback): the licence is revoked or suspended, as the
   * product's policy said when the session was created. Safe to repeat (a
   * licence already in that state, or revoked, is left as it is).
   */
  async refund(s: SessionDoc, requestId = ''): Promise<void> {
    if (!s.license_key) {
      // Not issued yet: issue() applies the refund once the licence exists.
      await this.store.addPendingRefund(s.payment_id ?? '', this.clock.now());
      return;
    }
    try {
      await this.licenses.transitionLicense(
        { account_id: s.account_id, key: s.license_key, action: s.refund_action ?? DEFAULT_POLICY.refund_action },
        { requestId },
      );
    } catch (err) {
      // 409: already suspended or revoked (a repeat, or the vendor acted first).
      if (!(err instanceof AppError && err.code === 'conflict')) throw err;
    }
    await this.store.markRefunded(s._id, this.clock.now());
  }

  /**
   * Sweeper pass: sessions paid but without a licence (a crash in between) are finished. One paid
   * less than PAID_GRACE_MS ago is left to the request that is finishing it (whose request id its
   * events carry); that request is out of time by then (the internal deadline is 5 s).
   */
  async finishPaid(): Promise<number> {
    let n = 0;
    const settled = this.clock.now().getTime() - PAID_GRACE_MS;
    for (const s of await this.store.paidWithoutLicense(100)) {
      if (s.paid_at && s.paid_at.getTime() > settled) continue;
      try {
        await this.issue(s);
        n++;
      } catch (err) {
        this.log.warn({ err, session: s._id }, 'could not finish a paid checkout; will retry');
      }
    }
    return n;
  }
}
