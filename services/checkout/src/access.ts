import type { CheckoutServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the checkout service: only the gateway. */
export const checkoutAccess: AccessPolicyOf<typeof CheckoutServiceService> = {
  gateway: ['createSession', 'getSession', 'listSessions', 'expireSession', 'eraseCustomer'],
};
