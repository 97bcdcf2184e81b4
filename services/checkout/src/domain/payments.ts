// Payments go through a provider. Two kinds exist:
// - Stripe (providers/stripe.ts): the buyer pays on Stripe Checkout; completion
//   arrives as a signed webhook (domain/stripe-events.ts says what each event means);
// - the explicit test mode below, for development: the hosted page takes a card
//   number and nothing is charged. Production refuses it unless chosen (domain/modes.ts).

export interface PaymentStart {
  /** Our session id: linked from the provider's session (metadata) and its idempotency key. */
  sessionId: string;
  accountId: string;
  productName: string;
  amount: number;
  currency: string;
  customerEmail: string;
  /** Where the buyer lands after paying (with session_id) and after cancelling. */
  successUrl: string;
  cancelUrl: string;
  expiresAt: Date;
  /** The hosted test-mode page of this session (where the buyer goes when the provider has no page of its own). */
  hostedPageUrl: string;
  /** A recurring price: a subscription of `quantity` seats at `unitAmount` each (amount = both). */
  recurring?: {
    interval: 'month' | 'year';
    intervalCount: number;
    trialDays: number;
    quantity: number;
    unitAmount: number;
    productId: string;
  };
}

export interface PaymentPage {
  /** Where the buyer is sent to pay. */
  url: string;
  /** The provider's own session id ('' for test mode). */
  providerSessionId: string;
  livemode: boolean;
}

export interface ChargeRequest {
  /** Also the idempotency key: charging one session twice is one payment. */
  sessionId: string;
  amount: number;
  currency: string;
  customerEmail: string;
  card: string;
}

export type ChargeResult = { ok: true; paymentId: string } | { ok: false; message: string };

export interface PaymentProvider {
  readonly name: 'test' | 'stripe';
  /** True when the hosted page takes the card itself (test mode). */
  readonly takesCardsOnPage: boolean;
  /** Prepares the payment of a new session: where to send the buyer. */
  start(req: PaymentStart): Promise<PaymentPage>;
  /** Ends the provider's side of an open session; false if it was already paid there. */
  cancel(providerSessionId: string): Promise<boolean>;
  /** Test mode only: take a card number on the hosted page. */
  charge(req: ChargeRequest): Promise<ChargeResult>;
}

export const TEST_CARD_OK = '4242424242424242';
export const TEST_CARD_DECLINED = '4000000000000002';
/** Pays the first time, fails afterwards (a subscription's renewals), as on Stripe. */
export const TEST_CARD_FAILS_LATER = '4000000000000341';

/** Test mode: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined; nothing is charged. */
export class TestModeProvider implements PaymentProvider {
  readonly name = 'test';
  readonly takesCardsOnPage = true;

  async start(req: PaymentStart): Promise<PaymentPage> {
    return { url: req.hostedPageUrl, providerSessionId: '', livemode: false };
  }

  async cancel(): Promise<boolean> {
    return true;
  }

  async charge(req: ChargeRequest): Promise<ChargeResult> {
    const card = req.card.replace(/[\s-]/g, '');
    if (card === TEST_CARD_OK || card === TEST_CARD_FAILS_LATER)
      return { ok: true, paymentId: `pay_test_${req.sessionId.slice(3)}` };
    if (card === TEST_CARD_DECLINED) return { ok: false, message: 'Your card was declined. Try another card.' };
    return {
      ok: false,
      message: 'Test mode: use the card 4242 4242 4242 4242 (or 4000 0000 0000 0002 to see a decline).',
    };
  }
}

/** success_url with our session id added (the vendor looks the session up with it). */
export function successUrlFor(successUrl: string, sessionId: string): string {
  return `${successUrl}${successUrl.includes('?') ? '&' : '?'}session_id=${encodeURIComponent(sessionId)}`;
}

/**
 * Stripe chosen but its keys not given yet (domain/modes.ts): every new payment is refused with a clear
 * 503, and nothing else changes (existing sessions, their pages and the API still answer).
 */
export class PaymentsNotConfigured implements PaymentProvider {
  readonly name = 'stripe';
  readonly takesCardsOnPage = false;

  constructor(private readonly refusal: () => Error) {}

  async start(): Promise<PaymentPage> {
    throw this.refusal();
  }

  async cancel(): Promise<boolean> {
    return true; // no provider session can exist
  }

  async charge(): Promise<ChargeResult> {
    return { ok: false, message: 'payments are not configured' };
  }
}
