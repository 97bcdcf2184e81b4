import type { CheckoutPageServiceService, CheckoutServiceService, SubscriptionServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the checkout service: the gateway (the API) and the web component (the dashboard). */
export const checkoutAccess: AccessPolicyOf<typeof CheckoutServiceService> = {
  gateway: ['createSession', 'getSession', 'listSessions', 'expireSession', 'eraseCustomer'],
  // The web component's dashboard: checkout links.
  web: ['createSession', 'listSessions'],
};

/** Subscriptions: the gateway (the API) and the web component (the dashboard). */
export const subscriptionAccess: AccessPolicyOf<typeof SubscriptionServiceService> = {
  gateway: ['listSubscriptions', 'getSubscription', 'cancelSubscription', 'createBillingPortal', 'advanceTestClock'],
  // The web component's dashboard: subscriptions.
  web: ['listSubscriptions', 'getSubscription', 'cancelSubscription'],
};

/** The hosted checkout page: the web component renders it (the session id in its URL is the capability). */
export const checkoutPageAccess: AccessPolicyOf<typeof CheckoutPageServiceService> = {
  web: ['getPage', 'pay', 'cancel', 'getBilling', 'updateBillingCard'],
};
