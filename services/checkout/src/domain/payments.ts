// Payments go through a provider. The built-in one is an explicit test mode;
// a real provider (Stripe, Paddle) is a drop-in adapter implementing the same
// interface (docs/checkout.md says what it must do).

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
  readonly name: string;
  readonly testMode: boolean;
  charge(req: ChargeRequest): Promise<ChargeResult>;
}

export const TEST_CARD_OK = '4242424242424242';
export const TEST_CARD_DECLINED = '4000000000000002';

/** Test mode: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined; nothing is charged. */
export class TestModeProvider implements PaymentProvider {
  readonly name = 'test';
  readonly testMode = true;

  async charge(req: ChargeRequest): Promise<ChargeResult> {
    const card = req.card.replace(/[\s-]/g, '');
    if (card === TEST_CARD_OK) return { ok: true, paymentId: `pay_test_${req.sessionId.slice(3)}` };
    if (card === TEST_CARD_DECLINED) return { ok: false, message: 'Your card was declined. Try another card.' };
    return { ok: false, message: 'Test mode: use the card 4242 4242 4242 4242 (or 4000 0000 0000 0002 to see a decline).' };
  }
}

export function formatPrice(amount: number, currency: string): string {
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(amount / 10 ** digits);
}
