import { AppError, newEvent, type CallOptions, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import type { CreateLicenseRequest, DomainEvent, License } from '@licensing/proto';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore } from '../store/queries';

export interface LicenseIssuer {
  createLicense(req: CreateLicenseRequest, opts?: CallOptions): Promise<License>;
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
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Records the payment. False if the session was no longer open (paid by another tab, or expired). */
  markPaid(s: SessionDoc, paymentId: string, email: string): Promise<boolean> {
    return this.store.markPaid(s._id, paymentId, email, this.clock.now());
  }

  /** Issues (or finds) the licence of a paid session and records it. Safe to call any number of times. */
  async issue(s: SessionDoc, requestId = ''): Promise<string> {
    if (s.license_key) return s.license_key;
    let license: License | undefined;
    for (let attempt = 0; !license; attempt++) {
      try {
        license = await this.licenses.createLicense(
          { accountId: s.account_id, productId: s.product_id, customerEmail: s.customer_email, idempotencyKey: `checkout:${s._id}` },
          { requestId },
        );
      } catch (err) {
        // Another tab is issuing this very licence right now: wait for its answer.
        if (err instanceof AppError && err.code === 'conflict' && attempt < 20) await new Promise((r) => setTimeout(r, 100));
        else throw err;
      }
    }
    const event = this.completedEvent(s, license.key);
    if (await this.store.recordLicense(s._id, license.key, event)) this.outbox.flush(this.store.models.Session, s._id);
    return license.key;
  }

  private completedEvent(s: SessionDoc, licenseKey: string): DomainEvent {
    const data = {
      checkout: { id: s._id, product_id: s.product_id, status: 'complete', amount: s.amount, currency: s.currency, customer_email: s.customer_email || null, expires_at: s.expires_at.toISOString(), created_at: s.created_at.toISOString() },
      license_key: licenseKey,
      customer_email: s.customer_email,
    };
    return newEvent('checkout.completed', s.account_id, data, this.clock.now(), `evt_completed_${s._id}`);
  }

  /** Sweeper pass: sessions paid but without a licence (a crash in between) are finished. */
  async finishPaid(): Promise<number> {
    let n = 0;
    for (const s of await this.store.paidWithoutLicense(100)) {
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
