import { idempotent, newId, type Handlers } from '@licensing/runtime';
import type { CheckoutServiceService, CheckoutSession } from '@licensing/proto';
import type { SessionDoc } from '../store/models';
import { eraseCustomer, type SubscriptionErasure } from '../use-cases/erase-customer';
import { checkNewSession, createSession, type SessionCreationDeps } from '../use-cases/create-session';
import { expireSession } from '../use-cases/expire-session';
import { getSession, listSessions } from '../use-cases/read-sessions';
import { subscriptionIdOf } from '../use-cases/subscriptions';

/** The use cases give sessions as seen at the time of the call: status here is the effective one. */
const toSession = (s: Omit<SessionDoc, 'outbox'>, baseUrl: string): CheckoutSession => ({
  id: s._id,
  account_id: s.account_id,
  product_id: s.product_id,
  status: s.status,
  amount: s.amount,
  currency: s.currency,
  customer_email: s.customer_email,
  success_url: s.success_url,
  cancel_url: s.cancel_url,
  metadata: s.metadata ?? {},
  url: s.provider_url || `${baseUrl}/checkout/${s._id}`,
  expires_at: s.expires_at.toISOString(),
  created_at: s.created_at.toISOString(),
  license_key: s.license_key ?? '',
  livemode: s.livemode ?? false,
  quantity: s.quantity ?? 1,
  // A paid recurring session's subscription (its id is the session's: use-cases/subscriptions.ts).
  subscription_id: s.recurring && s.license_key ? subscriptionIdOf(s._id) : '',
});

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function checkoutHandlers(
  deps: SessionCreationDeps,
  httpsOnly: boolean,
  /** The subscriptions' store, which an erasure goes through too. */
  subscriptions: SubscriptionErasure,
): Handlers<typeof CheckoutServiceService> {
  const present = (s: Omit<SessionDoc, 'outbox'>) => toSession(s, deps.baseUrl);
  return {
    eraseCustomer: async (req) => ({ erased: await eraseCustomer({ sessions: deps.store, subscriptions }, req) }),
    async createSession(req, call) {
      const input = checkNewSession(req, httpsOnly);
      if (!req.idempotency_key) return present(await createSession(deps, req.account_id, input, call.requestId));
      // A repeat with the same key gets the first answer again, as it was sent: the proto message is what is stored.
      return idempotent(
        deps.store.models.Idempotency,
        `${req.account_id}:create_checkout`,
        req.idempotency_key,
        input,
        async ({ resultId, resumed }) =>
          present(await createSession(deps, req.account_id, input, call.requestId, { sessionId: resultId, resumed })),
        { now: deps.clock.now(), resultId: () => newId('cs', deps.clock.now().getTime()) },
      );
    },

    getSession: async (req) => present(await getSession(deps, req.account_id, req.id)),
    expireSession: async (req) => present(await expireSession(deps, req.account_id, req.id)),

    async listSessions(req) {
      const { items, page } = await listSessions(deps, req.account_id, req.status, req.page);
      return { data: items.map(present), page };
    },
  };
}
