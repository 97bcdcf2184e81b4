import type { Request, Response } from 'express';
import type { CheckoutPageSession } from '@licensing/proto';
import type { CheckoutPageContext } from '../../src/checkout/handlers';
import { cancel, pay, showCheckout, updateBilling } from '../../src/checkout/handlers';
import { billingPage, formatPrice, paidPage, payPage, perPeriod } from '../../src/checkout/pages';
import { CHECKOUT_ROUTES, pageSessionId } from '../../src/checkout/routes';

const ID = 'cs_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';

const session = (over: Partial<CheckoutPageSession> = {}): CheckoutPageSession => ({
  id: ID,
  product_name: 'Pro <b>"plan"</b>',
  amount: 1900,
  currency: 'EUR',
  customer_email: '',
  return_url: 'https://v.example/thanks?session_id=cs_1&x="1"',
  cancel_url: 'https://v.example/cart',
  provider: 'test',
  provider_url: '',
  takes_cards: true,
  interval: '',
  interval_count: 0,
  trial_days: 0,
  ...over,
});

/** What a handler did to the response: status, headers, cookies, body or redirect. */
function fakeResponse() {
  const out = { status: 200, body: '', cookies: [] as string[], redirect: '', type: '' };
  const res = {
    locals: { requestId: 'r' },
    status(s: number) {
      out.status = s;
      return res;
    },
    type(t: string) {
      out.type = t;
      return res;
    },
    send(b: string) {
      out.body = b;
      return res;
    },
    append(name: string, v: string) {
      if (name === 'Set-Cookie') out.cookies.push(v);
      return res;
    },
    redirect(s: number, to: string) {
      out.status = s;
      out.redirect = to;
    },
  };
  return { res: res as unknown as Response, out };
}

const request = (over: { params?: object; body?: object; cookie?: string } = {}) =>
  ({
    params: { id: ID, ...over.params },
    body: over.body ?? {},
    get: (name: string) => (name.toLowerCase() === 'cookie' ? over.cookie : undefined),
  }) as unknown as Request;

const context = (pages: Partial<CheckoutPageContext['pages']>): CheckoutPageContext => ({
  pages: pages as CheckoutPageContext['pages'],
  secureCookies: true,
});

describe('hosted checkout page templates', () => {
  it('escape what the seller and the buyer typed, in text and in attributes', () => {
    const page = String(payPage(session({ customer_email: '"><script>x</script>' }), 'tok"en', 'bad <input>'));
    expect(page).toContain('Pro &lt;b&gt;&quot;plan&quot;&lt;/b&gt;');
    expect(page).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
    expect(page).toContain('value="tok&quot;en"');
    expect(page).toContain('<p class="error" role="alert">bad &lt;input&gt;</p>');
    expect(page).not.toContain('<script>x');
    const paid = String(paidPage(session(), 'KEY-<1>'));
    expect(paid).toContain('>KEY-&lt;1&gt;</code>');
    expect(paid).toContain('href="https://v.example/thanks?session_id=cs_1&amp;x=&quot;1&quot;"');
    expect(paid).toContain('content="8;url=https://v.example/thanks?session_id=cs_1&amp;x=&quot;1&quot;"');
  });

  it('offer the way back only when the session has a cancel URL', () => {
    expect(String(payPage(session(), 't'))).toContain('action="/checkout/cs_01JD8Z3K6Q2W4E5R6T7Y8V9X0P/cancel"');
    expect(String(payPage(session({ cancel_url: '' }), 't'))).not.toContain('/cancel');
  });

  it('state a recurring price per period, and its free days', () => {
    expect(perPeriod({ interval: '', interval_count: 0 })).toBe('');
    expect(perPeriod({ interval: 'month', interval_count: 1 })).toBe(' / month');
    expect(perPeriod({ interval: 'month', interval_count: 3 })).toBe(' / 3 months');
    const page = String(payPage(session({ interval: 'year', interval_count: 1, trial_days: 14 }), 't'));
    expect(page).toContain('€19.00 / year');
    expect(page).toContain('14 days free, then billed year; cancel any time.');
    expect(formatPrice(500, 'JPY')).toBe('¥500');
  });

  it('the billing page names the status and asks to pay now only when a period is owed', () => {
    const b = {
      found: true,
      product_name: 'Pro',
      status: 'past_due',
      amount: 900,
      currency: 'USD',
      interval: 'month',
      interval_count: 1,
      outcome: '',
      message: '',
    };
    const page = String(billingPage(b, '/checkout/x/billing/t', { ok: false, message: 'declined <x>' }));
    expect(page).toContain('data-testid="subscription-status">past due</strong>');
    expect(page).toContain('Update card and pay now');
    expect(page).toContain('role="alert">declined &lt;x&gt;</p>');
    expect(String(billingPage({ ...b, status: 'active' }, '/a'))).toContain('>Update card</button>');
  });
});

describe('hosted checkout page routes', () => {
  it('are one table of single handlers', () => {
    expect(CHECKOUT_ROUTES.map(([m, p]) => `${m} ${p}`)).toEqual([
      'get /:id',
      'post /:id/pay',
      'get /:id/cancel',
      'post /:id/cancel',
      'get /:id/billing/:token',
      'post /:id/billing/:token',
    ]);
  });

  it('a path names a session only with a well-formed id', () => {
    expect(pageSessionId(`/${ID}`)).toBe(ID);
    expect(pageSessionId(`/${ID}/pay`)).toBe(ID);
    for (const bad of ['/%ED%A0%80', '/prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P', '/', `/${ID}%`])
      expect(pageSessionId(bad)).toBeUndefined();
  });

  it('the pay page sets the form token as a Strict, HttpOnly cookie of the session path', async () => {
    const getPage = jest.fn(async () => ({ state: 'open', session: session(), license_key: '', form_token: 'tok' }));
    const { res, out } = fakeResponse();
    await showCheckout(context({ getPage }), request({ cookie: 'lk_checkout_receipt=r1' }), res);
    expect(getPage).toHaveBeenCalledWith({ session_id: ID, receipt: 'r1', issue_form_token: true });
    expect(out.status).toBe(200);
    expect(out.cookies).toEqual([`lk_checkout_csrf=tok; Path=/checkout/${ID}; HttpOnly; SameSite=Strict; Secure`]);
    expect(out.body).toContain('name="_csrf" value="tok"');
  });

  it('the browser that paid sees its key; others see why the session cannot be paid', async () => {
    const states: [string, number][] = [
      ['not_found', 404],
      ['expired', 410],
      ['complete', 409],
    ];
    for (const [state, status] of states) {
      const { res, out } = fakeResponse();
      const getPage = async () => ({ state, session: session(), license_key: '', form_token: '' });
      await showCheckout(context({ getPage }), request(), res);
      expect([state, out.status, out.cookies]).toEqual([state, status, []]);
    }
    const { res, out } = fakeResponse();
    const getPage = async () => ({ state: 'paid_here', session: session(), license_key: 'K-1', form_token: '' });
    await showCheckout(context({ getPage }), request(), res);
    expect(out.body).toContain('data-testid="license-key">K-1</code>');
  });

  it('a Stripe session goes to Stripe; a page that cannot take cards says so', async () => {
    let r = fakeResponse();
    const stripe = session({ provider: 'stripe', provider_url: 'https://checkout.stripe.com/x', takes_cards: false });
    await showCheckout(
      context({ getPage: async () => ({ state: 'open', session: stripe, license_key: '', form_token: '' }) }),
      request(),
      r.res,
    );
    expect([r.out.status, r.out.redirect]).toEqual([303, 'https://checkout.stripe.com/x']);
    r = fakeResponse();
    const off = session({ takes_cards: false });
    await showCheckout(
      context({ getPage: async () => ({ state: 'open', session: off, license_key: '', form_token: '' }) }),
      request(),
      r.res,
    );
    expect(r.out.status).toBe(503);
  });

  it('a form whose token and cookie differ is refused before the service is asked', async () => {
    const payCall = jest.fn();
    const cancelCall = jest.fn();
    for (const cookie of [undefined, 'lk_checkout_csrf=other', 'lk_checkout_csrf=%E2%82']) {
      const { res, out } = fakeResponse();
      await pay(context({ pay: payCall }), request({ cookie, body: { _csrf: 'tok' } }), res);
      expect(out.status).toBe(403);
      const c = fakeResponse();
      await cancel(context({ cancel: cancelCall }), request({ cookie, body: { _csrf: 'tok' } }), c.res);
      expect(c.out.status).toBe(403);
    }
    expect(payCall).not.toHaveBeenCalled();
    expect(cancelCall).not.toHaveBeenCalled();
  });

  it('paying sets the receipt cookie and shows the session again', async () => {
    const payCall = jest.fn(async () => ({
      outcome: 'paid',
      receipt: 'rcpt',
      message: '',
      session: undefined,
      form_token: '',
    }));
    const { res, out } = fakeResponse();
    const body = { _csrf: 'tok', email: 'b@example.com', card: '4242 4242 4242 4242' };
    await pay(context({ pay: payCall }), request({ cookie: 'lk_checkout_csrf=tok', body }), res);
    expect(payCall).toHaveBeenCalledWith({
      session_id: ID,
      form_token: 'tok',
      receipt: '',
      email: 'b@example.com',
      card: '4242 4242 4242 4242',
    });
    expect([out.status, out.redirect]).toEqual([303, `/checkout/${ID}`]);
    expect(out.cookies).toEqual([`lk_checkout_receipt=rcpt; Path=/checkout/${ID}; HttpOnly; SameSite=Strict; Secure`]);
  });

  it('a declined card shows the form again with a fresh token and the reason', async () => {
    const payCall = async () => ({
      outcome: 'declined',
      receipt: '',
      message: 'Your card was declined.',
      session: session({ customer_email: 'b@example.com' }),
      form_token: 'fresh',
    });
    const { res, out } = fakeResponse();
    await pay(context({ pay: payCall }), request({ cookie: 'lk_checkout_csrf=tok', body: { _csrf: 'tok' } }), res);
    expect(out.status).toBe(402);
    expect(out.body).toContain('Your card was declined.');
    expect(out.body).toContain('value="b@example.com"');
    expect(out.cookies[0]).toMatch(/^lk_checkout_csrf=fresh;/);
  });

  it('the billing page answers a canceled subscription with 409 and a declined card with 402', async () => {
    const billing = (outcome: string) => async () => ({
      found: true,
      product_name: 'Pro',
      status: 'active',
      amount: 900,
      currency: 'USD',
      interval: 'month',
      interval_count: 1,
      outcome,
      message: 'm',
    });
    const statuses: number[] = [];
    for (const outcome of ['updated', 'declined', 'canceled']) {
      const { res, out } = fakeResponse();
      await updateBilling(context({ updateBillingCard: billing(outcome) }), request({ params: { token: 't' } }), res);
      statuses.push(out.status);
    }
    expect(statuses).toEqual([200, 402, 409]);
  });
});
