import type { AccountServiceClient, LicenseServiceClient, ProductServiceClient } from '@licensing/proto';
import type { Clock, Unary } from '@licensing/runtime';
import type { EmailStore } from '../store/emails';
import type { PortalStore } from '../store/portal';

/** What the notification use cases work with; main.ts gives the real ones. */
export interface NotificationDeps {
  emails: EmailStore;
  /** Sign-in links, their uses, and portal sessions. */
  portal: PortalStore;
  clock: Clock;
  /** The account service: the vendor's name and support e-mail. */
  accounts: Unary<AccountServiceClient>;
  /** The product service: the product's name and its email_on_purchase setting. */
  products: Unary<ProductServiceClient>;
  /** The licence service: the licence (expiry) and its signed licence file; whether an address holds licences. */
  licenses: Unary<LicenseServiceClient>;
  /** The gateway's public address, for the portal link. */
  publicBaseUrl: string;
  /**
   * Sign-in links sent to one address of one account per hour at most (PORTAL_SIGNINS_PER_EMAIL):
   * only mails that go out count, so requests for an address (anyone can type a customer's) never
   * lock its owner out while their links keep arriving. Absent: PORTAL_SIGNINS_PER_EMAIL's default.
   */
  signInMailsPerHour?: number;
}
