import Stripe from 'stripe';
import { AppError } from '@licensing/runtime';
import type { ChargeResult, PaymentPage, PaymentProvider, PaymentStart } from '../domain/payments';
import { successUrlFor } from '../domain/payments';
import { LINK_KEY, type StripeEventLike } from '../domain/stripe-events';
import type { VerifiedEvent } from '../use-cases/stripe-webhook';

/** Stripe's own limit, and ours: a signed event older (or newer) than this is refused. */
export const WEBHOOK_TOLERANCE_S = 300;

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** stripe-mock in tests ('' = api.stripe.com). */
  apiUrl: string;
}

/**
 * The Stripe adapter, on the official SDK: a new checkout session becomes a
 * Stripe Checkout Session (price, currency, URLs, metadata naming ours) and
 * the buyer pays there; completion comes back as a signed webhook.
 */
export class StripeProvider implements PaymentProvider {
  readonly name = 'stripe';
  readonly takesCardsOnPage = false;
  private readonly stripe: Stripe;

  constructor(private readonly settings: StripeSettings) {
    const api = settings.apiUrl ? new URL(settings.apiUrl) : undefined;
    this.stripe = new Stripe(settings.secretKey, {
      maxNetworkRetries: 2,
      timeout: 10_000,
      telemetry: false,
      ...(api
        ? {
            host: api.hostname,
            port: api.port || (api.protocol === 'https:' ? 443 : 80),
            protocol: api.protocol === 'https:' ? 'https' : 'http',
          }
        : {}),
    });
  }

  async start(req: PaymentStart): Promise<PaymentPage> {
    const metadata = { [LINK_KEY]: req.sessionId, account_id: req.accountId };
    try {
      const r = req.recurring;
      // A recurring price: Stripe Checkout in subscription mode; the subscription (and so its invoices)
      // carry the same link to our session, and our product id (a plan change names another).
      const cs = await this.stripe.checkout.sessions.create(
        r
          ? {
              mode: 'subscription',
              line_items: [
                {
                  quantity: r.quantity,
                  price_data: {
                    currency: req.currency.toLowerCase(),
                    unit_amount: r.unitAmount,
                    recurring: { interval: r.interval, interval_count: r.intervalCount },
                    product_data: { name: req.productName, metadata: { product_id: r.productId } },
                  },
                },
              ],
              success_url: successUrlFor(req.successUrl, req.sessionId),
              ...(req.cancelUrl ? { cancel_url: req.cancelUrl } : {}),
              ...(req.customerEmail ? { customer_email: req.customerEmail } : {}),
              client_reference_id: req.sessionId,
              metadata,
              subscription_data: {
                metadata: { ...metadata, product_id: r.productId },
                ...(r.trialDays ? { trial_period_days: r.trialDays } : {}),
              },
              expires_at: Math.floor(req.expiresAt.getTime() / 1000),
            }
          : {
              mode: 'payment',
              line_items: [
                {
                  quantity: 1,
                  price_data: {
                    currency: req.currency.toLowerCase(),
                    unit_amount: req.amount,
                    product_data: { name: req.productName },
                  },
                },
              ],
              success_url: successUrlFor(req.successUrl, req.sessionId),
              ...(req.cancelUrl ? { cancel_url: req.cancelUrl } : {}),
              ...(req.customerEmail ? { customer_email: req.customerEmail } : {}),
              client_reference_id: req.sessionId,
              metadata,
              payment_intent_data: { metadata },
              // Stripe allows 30 minutes to 24 hours: the same range as ours.
              expires_at: Math.floor(req.expiresAt.getTime() / 1000),
            },
        // A retried create (a lost answer) is the same Stripe session, never a second one.
        { idempotencyKey: `create:${req.sessionId}` },
      );
      if (!cs.url) throw new Error('Stripe returned a Checkout Session without a URL');
      return { url: cs.url, providerSessionId: cs.id, livemode: cs.livemode };
    } catch (err) {
      throw stripeFailure(err);
    }
  }

  async cancel(providerSessionId: string): Promise<boolean> {
    try {
      const cs = await this.stripe.checkout.sessions.expire(providerSessionId);
      return cs.status !== 'complete';
    } catch (err) {
      // Stripe refuses to expire a session that is no longer open (paid, or already expired).
      if (err instanceof Stripe.errors.StripeInvalidRequestError) {
        const cs = await this.stripe.checkout.sessions
          .retrieve(providerSessionId)
          .catch((e: unknown) => Promise.reject(stripeFailure(e)));
        return cs.status !== 'complete';
      }
      throw stripeFailure(err);
    }
  }

  /** Cancels a Stripe subscription at its period end, or now. */
  async cancelSubscription(providerSubscriptionId: string, atPeriodEnd: boolean): Promise<void> {
    try {
      if (atPeriodEnd) await this.stripe.subscriptions.update(providerSubscriptionId, { cancel_at_period_end: true });
      else await this.stripe.subscriptions.cancel(providerSubscriptionId);
    } catch (err) {
      throw stripeFailure(err);
    }
  }

  /** A session of Stripe's billing portal for the customer: the customer updates their card there. */
  async billingPortal(customerId: string, returnUrl: string): Promise<{ url: string }> {
    try {
      const ps = await this.stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl });
      // Serialized as a URL (stripe-mock's placeholder {SESSION_SECRET} is percent-encoded; Stripe's own are unchanged).
      const url = ps.url ? new URL(ps.url) : null;
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
        throw new Error('Stripe returned a billing portal session without a URL');
      return { url: url.href };
    } catch (err) {
      // Refused (no portal configured on the Stripe account, an unknown customer): the vendor must act.
      if (err instanceof Stripe.errors.StripeInvalidRequestError)
        throw new AppError('conflict', `Stripe refused the billing portal session: ${err.message}`);
      throw stripeFailure(err);
    }
  }

  async charge(): Promise<ChargeResult> {
    return { ok: false, message: 'This checkout is paid on Stripe.' };
  }

  /**
   * A webhook delivery → the event and when Stripe signed it, only if Stripe signed exactly these
   * bytes with our endpoint's secret within the last 300 s; otherwise null.
   */
  verify(rawBody: Buffer, signature: string, nowS = Math.floor(Date.now() / 1000)): VerifiedEvent | null {
    // One signing time only (the SDK would take the last of several): it names the delivery. The SDK
    // refuses signatures older than the tolerance; one from further in the future is refused here.
    const times = new Set([...signature.matchAll(/(?:^|,)\s*t=([^,]*)/g)].map((m) => m[1].trim()));
    const t = times.size === 1 ? Number([...times][0]) : Number.NaN;
    if (!Number.isSafeInteger(t) || t - nowS > WEBHOOK_TOLERANCE_S) return null;
    try {
      const event = this.stripe.webhooks.constructEvent(
        rawBody,
        signature,
        this.settings.webhookSecret,
        WEBHOOK_TOLERANCE_S,
      ) as unknown as StripeEventLike;
      return { event, signedAt: t };
    } catch {
      return null;
    }
  }
}

/** Stripe down or refusing: the caller gets 503 (retry) for connection trouble, 400 for a refused request. */
function stripeFailure(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof Stripe.errors.StripeInvalidRequestError)
    return new AppError('invalid_request', `Stripe refused the checkout session: ${err.message}`);
  return new AppError('service_unavailable', 'the payment provider is unavailable; retry in a moment');
}
