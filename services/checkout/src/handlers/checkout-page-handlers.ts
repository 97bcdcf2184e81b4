import type { CheckoutBilling, CheckoutPageServiceService, CheckoutPageSession } from '@licensing/proto';
import { isId, type Handlers } from '@licensing/runtime';
import type { SessionDoc } from '../store/models';
import {
  cancelOnPage,
  openPage,
  payOnPage,
  returnUrlOf,
  takesCards,
  type HostedPageDeps,
} from '../use-cases/hosted-page';
import { portalSubscription, updateCard, type SubscriptionDeps } from '../use-cases/subscriptions';

const pageSession = (deps: HostedPageDeps, s: SessionDoc): CheckoutPageSession => ({
  id: s._id,
  product_name: s.product_name,
  amount: s.amount,
  currency: s.currency,
  customer_email: s.customer_email,
  return_url: returnUrlOf(s),
  cancel_url: s.cancel_url,
  provider: s.provider,
  provider_url: s.provider_url,
  takes_cards: takesCards(deps, s),
  interval: s.recurring?.interval ?? '',
  interval_count: s.recurring?.interval_count ?? 0,
  trial_days: s.recurring?.trial_days ?? 0,
});

const NO_BILLING: CheckoutBilling = {
  found: false,
  product_name: '',
  status: '',
  amount: 0,
  currency: '',
  interval: '',
  interval_count: 0,
  outcome: '',
  message: '',
};

/** The link's token: 32 random bytes, base64url. */
const BILLING_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The test-mode billing portal's subscription, if the link is good (its token's digest stored, an hour). */
async function billingOf(pages: HostedPageDeps, subs: SubscriptionDeps | undefined, id: string, token: string) {
  if (!subs || !isId('cs', id) || !BILLING_TOKEN.test(token)) return null;
  const sub = await portalSubscription(subs, id, token);
  const session = sub ? await pages.store.findById(id) : null;
  return sub && session ? { sub, session } : null;
}

type Billing = NonNullable<Awaited<ReturnType<typeof billingOf>>>;

const billingView = ({ sub, session }: Billing, outcome = '', message = ''): CheckoutBilling => ({
  found: true,
  product_name: session.product_name,
  status: sub.status,
  amount: sub.amount,
  currency: sub.currency,
  interval: sub.interval,
  interval_count: sub.interval_count,
  outcome,
  message,
});

/** Proto to use case and back for the hosted page (use-cases/hosted-page.ts holds the rules). */
export function checkoutPageHandlers(
  deps: HostedPageDeps,
  subscriptions?: SubscriptionDeps,
): Handlers<typeof CheckoutPageServiceService> {
  return {
    async getPage(req, call) {
      const p = await openPage(deps, req.session_id, req.receipt, req.issue_form_token, call.requestId);
      return {
        state: p.state,
        session: p.session ? pageSession(deps, p.session) : undefined,
        license_key: p.licenseKey,
        form_token: p.formToken,
      };
    },

    async pay(req, call) {
      const form = { formToken: req.form_token, receipt: req.receipt, email: req.email, card: req.card };
      const out = await payOnPage(deps, req.session_id, form, call.requestId);
      return {
        outcome: out.outcome,
        receipt: 'receipt' in out ? out.receipt : '',
        message: 'message' in out ? out.message : '',
        session: 'session' in out ? pageSession(deps, out.session) : undefined,
        form_token: 'formToken' in out ? out.formToken : '',
      };
    },

    async cancel(req) {
      const out = await cancelOnPage(deps, req.session_id, req.form_token);
      return { outcome: out.outcome, cancel_url: out.cancelUrl };
    },

    async getBilling(req) {
      const b = await billingOf(deps, subscriptions, req.session_id, req.token);
      return b ? billingView(b) : NO_BILLING;
    },

    async updateBillingCard(req, call) {
      const b = await billingOf(deps, subscriptions, req.session_id, req.token);
      if (!b) return NO_BILLING;
      if (b.sub.status === 'canceled') return billingView(b, 'canceled', 'This subscription is canceled.');
      const out = await updateCard(subscriptions!, b.sub, req.card.slice(0, 30), call.requestId);
      return billingView({ ...b, sub: out.doc }, out.ok ? 'updated' : 'declined', out.message);
    },
  };
}
