import Stripe from 'stripe';
import { AppError } from '@licensing/runtime';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { paymentModeProblems, paymentsNotConfigured, type PaymentModeSettings } from '../../src/domain/modes';
import { interpretStripeEvent, mismatch, type StripeEventLike } from '../../src/domain/stripe-events';
import { checkRedirectUrl } from '../../src/domain/session';
import { successUrlFor } from '../../src/domain/payments';
import { StripeProvider } from '../../src/providers/stripe';

const mode = (over: Partial<PaymentModeSettings> = {}): PaymentModeSettings => ({
  NODE_ENV: 'production',
  PAYMENT_PROVIDER: 'stripe',
  CHECKOUT_TEST_MODE: false,
  STRIPE_SECRET_KEY: 'sk_live_abc123',
  STRIPE_WEBHOOK_SECRET: 'whsec_abc123',
  STRIPE_API_URL: '',
  ...over,
});

describe('payment modes', () => {
  it('production refuses the test-mode provider unless CHECKOUT_TEST_MODE=true', () => {
    expect(paymentModeProblems(mode({ PAYMENT_PROVIDER: 'test' })).join()).toMatch(/CHECKOUT_TEST_MODE=true/);
    expect(paymentModeProblems(mode({ PAYMENT_PROVIDER: 'test', CHECKOUT_TEST_MODE: true }))).toEqual([]);
    expect(paymentModeProblems(mode({ PAYMENT_PROVIDER: 'test', NODE_ENV: 'development' }))).toEqual([]);
    expect(paymentModeProblems(mode({ PAYMENT_PROVIDER: 'test', NODE_ENV: 'test' }))).toEqual([]);
  });

  it('Stripe needs a secret key and a webhook signing secret, and production talks to Stripe itself', () => {
    expect(paymentModeProblems(mode())).toEqual([]);
    expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: '' })).join()).toMatch(/STRIPE_SECRET_KEY/);
    expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: 'pk_live_abc' })).join()).toMatch(/STRIPE_SECRET_KEY/);
    expect(paymentModeProblems(mode({ STRIPE_WEBHOOK_SECRET: 'secret' })).join()).toMatch(/STRIPE_WEBHOOK_SECRET/);
    expect(paymentModeProblems(mode({ STRIPE_API_URL: 'http://127.0.0.1:12111' })).join()).toMatch(/STRIPE_API_URL/);
    expect(paymentModeProblems(mode({ NODE_ENV: 'test', STRIPE_API_URL: 'http://127.0.0.1:12111' }))).toEqual([]);
  });

  it('production refuses a Stripe test key unless CHECKOUT_TEST_MODE=true, as it refuses the built-in test mode', () => {
    for (const key of ['sk_test_abc123', 'rk_test_abc123']) {
      expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: key })).join()).toMatch(
        /STRIPE_SECRET_KEY is a Stripe test key.*CHECKOUT_TEST_MODE=true/,
      );
      expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: key, CHECKOUT_TEST_MODE: true }))).toEqual([]);
      expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: key, NODE_ENV: 'development' }))).toEqual([]);
      expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: key, NODE_ENV: 'test' }))).toEqual([]);
    }
    expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: 'rk_live_abc123' }))).toEqual([]);
  });

  it('Stripe with neither secret given (empty, or the placeholders deploy/make-secrets.sh writes) runs without payments', () => {
    // The placeholders as the script writes them: a fresh compose deployment with no Stripe keys.
    const script = readFileSync(join(__dirname, '..', '..', '..', '..', 'deploy', 'make-secrets.sh'), 'utf8');
    const placeholder = (name: string) => script.match(new RegExp(`\\$\\{${name}:-([^}]*)\\}`))![1];
    const fresh = mode({
      STRIPE_SECRET_KEY: placeholder('STRIPE_SECRET_KEY'),
      STRIPE_WEBHOOK_SECRET: placeholder('STRIPE_WEBHOOK_SECRET'),
    });
    expect(fresh.STRIPE_SECRET_KEY).toMatch(/^replace-me/);
    expect(paymentModeProblems(fresh)).toEqual([]);
    expect(paymentsNotConfigured(fresh)).toBe(true);
    expect(paymentsNotConfigured(mode({ STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: ' ' }))).toBe(true);
    // Given keys, or test mode: configured.
    expect(paymentsNotConfigured(mode())).toBe(false);
    expect(
      paymentsNotConfigured(mode({ PAYMENT_PROVIDER: 'test', STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' })),
    ).toBe(false);
    // One secret given and not the other, or a given one malformed: a mistake, refused at start as before.
    expect(paymentModeProblems(mode({ STRIPE_WEBHOOK_SECRET: fresh.STRIPE_WEBHOOK_SECRET })).join()).toMatch(
      /STRIPE_WEBHOOK_SECRET/,
    );
    expect(paymentModeProblems(mode({ STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: 'whsec_x' })).join()).toMatch(
      /STRIPE_SECRET_KEY/,
    );
  });
});

describe('redirect URLs', () => {
  it('must be https in production, and http(s) elsewhere', () => {
    expect(() => checkRedirectUrl('success_url', 'http://vendor.example/thanks', true, true)).toThrow(/https URL/);
    expect(checkRedirectUrl('success_url', 'https://vendor.example/thanks', true, true)).toBe(
      'https://vendor.example/thanks',
    );
    expect(checkRedirectUrl('success_url', 'http://127.0.0.1/thanks', true, false)).toBe('http://127.0.0.1/thanks');
    expect(() => checkRedirectUrl('cancel_url', 'javascript:alert(1)', false, false)).toThrow(AppError);
  });

  it('success_url gets the session id', () => {
    expect(successUrlFor('https://v.example/t', 'cs_1')).toBe('https://v.example/t?session_id=cs_1');
    expect(successUrlFor('https://v.example/t?a=1', 'cs_1')).toBe('https://v.example/t?a=1&session_id=cs_1');
  });
});

const OURS = 'cs_01M82BCFGS21FWB5Z5A498AR3N';
const event = (type: string, object: Record<string, unknown>, livemode = false): StripeEventLike => ({
  id: 'evt_1',
  type,
  livemode,
  data: { object },
});
const paidSession = {
  id: 'cs_test_1',
  metadata: { checkout_session_id: OURS },
  payment_status: 'paid',
  payment_intent: 'pi_1',
  customer_details: { email: 'b@example.com' },
  amount_total: 4900,
  currency: 'eur',
};

describe('what a Stripe event means', () => {
  it('a paid checkout.session.completed (or async_payment_succeeded) completes our session', () => {
    const paid = {
      kind: 'paid',
      sessionId: OURS,
      providerSessionId: 'cs_test_1',
      paymentId: 'pi_1',
      email: 'b@example.com',
      livemode: false,
      amount: 4900,
      currency: 'EUR',
      providerSubscriptionId: '',
      customerId: '',
    };
    expect(interpretStripeEvent(event('checkout.session.completed', paidSession))).toEqual(paid);
    expect(interpretStripeEvent(event('checkout.session.async_payment_succeeded', paidSession))).toEqual(paid);
    // Linked by client_reference_id alone, too.
    expect(
      interpretStripeEvent(
        event('checkout.session.completed', { ...paidSession, metadata: {}, client_reference_id: OURS }),
      ),
    ).toMatchObject({ kind: 'paid', sessionId: OURS });
  });

  it('an unpaid completion waits; an expiry expires; sessions not ours and other types are ignored', () => {
    expect(
      interpretStripeEvent(event('checkout.session.completed', { ...paidSession, payment_status: 'unpaid' })),
    ).toMatchObject({ kind: 'awaiting_payment' });
    expect(interpretStripeEvent(event('checkout.session.expired', paidSession))).toMatchObject({
      kind: 'expired',
      sessionId: OURS,
    });
    expect(interpretStripeEvent(event('checkout.session.completed', { ...paidSession, metadata: {} })).kind).toBe(
      'ignored',
    );
    expect(interpretStripeEvent(event('invoice.paid', {})).kind).toBe('ignored');
  });

  it('only a full refund of a PaymentIntent counts', () => {
    expect(interpretStripeEvent(event('charge.refunded', { refunded: true, payment_intent: 'pi_1' }, true))).toEqual({
      kind: 'refunded',
      paymentId: 'pi_1',
      livemode: true,
      cause: 'refund',
    });
    expect(interpretStripeEvent(event('charge.refunded', { refunded: false, payment_intent: 'pi_1' })).kind).toBe(
      'ignored',
    );
    expect(interpretStripeEvent(event('charge.refunded', { refunded: true, payment_intent: null })).kind).toBe(
      'ignored',
    );
  });

  it('a chargeback (charge.dispute.created) of a PaymentIntent takes the payment back like a full refund', () => {
    const dispute = { id: 'dp_1', object: 'dispute', charge: 'ch_1', payment_intent: 'pi_1', amount: 4900 };
    expect(interpretStripeEvent(event('charge.dispute.created', dispute))).toEqual({
      kind: 'refunded',
      paymentId: 'pi_1',
      livemode: false,
      cause: 'dispute',
    });
    expect(interpretStripeEvent(event('charge.dispute.created', { ...dispute, payment_intent: null })).kind).toBe(
      'ignored',
    );
  });

  it('an event must match the session: its Stripe session, livemode, amount and currency', () => {
    const s = { provider: 'stripe', provider_session_id: 'cs_test_1', livemode: false, amount: 4900, currency: 'EUR' };
    const a = { providerSessionId: 'cs_test_1', livemode: false, amount: 4900, currency: 'eur' };
    expect(mismatch(s, a)).toBeNull();
    expect(mismatch(s, { ...a, amount: null, currency: null })).toBeNull();
    expect(mismatch({ ...s, provider: 'test' }, a)).toMatch(/not paid through Stripe/);
    expect(mismatch(s, { ...a, providerSessionId: 'cs_test_2' })).toMatch(/not the one/);
    expect(mismatch(s, { ...a, livemode: true })).toMatch(/live event/);
    expect(mismatch(s, { ...a, amount: 100 })).toMatch(/amount/);
    expect(mismatch(s, { ...a, currency: 'usd' })).toMatch(/amount/);
  });
});

describe('webhook signatures', () => {
  const secret = 'whsec_unitTestSecret';
  const provider = new StripeProvider({ secretKey: 'sk_test_x', webhookSecret: secret, apiUrl: 'http://127.0.0.1:1' });
  const helper = new Stripe('sk_test_x');
  const payload = JSON.stringify({
    id: 'evt_1',
    type: 'checkout.session.completed',
    livemode: false,
    data: { object: {} },
  });
  const now = Math.floor(Date.now() / 1000);
  const sign = (opts: { secret?: string; timestamp?: number; body?: string } = {}) =>
    helper.webhooks.generateTestHeaderString({
      payload: opts.body ?? payload,
      secret: opts.secret ?? secret,
      timestamp: opts.timestamp ?? now,
    });

  it('accepts Stripe’s signature over the exact bytes within 300 s either way', () => {
    expect(provider.verify(Buffer.from(payload), sign(), now)).toEqual({
      event: expect.objectContaining({ id: 'evt_1' }),
      signedAt: now,
    });
    expect(provider.verify(Buffer.from(payload), sign({ timestamp: now - 290 }), now)).not.toBeNull();
    expect(provider.verify(Buffer.from(payload), sign({ timestamp: now + 290 }), now)).not.toBeNull();
  });

  it('refuses another secret, another body, a stale or future timestamp, and a missing header', () => {
    expect(provider.verify(Buffer.from(payload), sign({ secret: 'whsec_other' }), now)).toBeNull();
    expect(provider.verify(Buffer.from(`${payload} `), sign(), now)).toBeNull();
    expect(provider.verify(Buffer.from(payload), sign({ timestamp: now - 301 }), now)).toBeNull();
    expect(provider.verify(Buffer.from(payload), sign({ timestamp: now + 301 }), now)).toBeNull();
    expect(provider.verify(Buffer.from(payload), '', now)).toBeNull();
  });

  it('names the signing time the signature was made for; a header with two signing times is refused', () => {
    const header = sign({ timestamp: now - 10 });
    expect(provider.verify(Buffer.from(payload), `${header},v1=${'0'.repeat(64)}`, now)?.signedAt).toBe(now - 10);
    expect(provider.verify(Buffer.from(payload), `t=${now - 20},${header}`, now)).toBeNull();
  });
});
