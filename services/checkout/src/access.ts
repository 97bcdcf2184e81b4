import type { CheckoutServiceService, SubscriptionServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the checkout service: only the gateway. */
export const checkoutAccess: AccessPolicyOf<typeof CheckoutServiceService> = {
  gateway: ['createSession', 'getSession', 'listSessions', 'expireSession', 'eraseCustomer'],
};

/** Subscriptions: only the gateway (the API and the dashboard). */
export const subscriptionAccess: AccessPolicyOf<typeof SubscriptionServiceService> = {
  gateway: ['listSubscriptions', 'getSubscription', 'cancelSubscription', 'createBillingPortal', 'advanceTestClock'],
};
