import { allowed } from '@licensing/runtime';
import { notificationAccess } from '../../src/access';

// Only the web component signs a customer in to the portal: the gateway's credential, which answers
// the public API, is refused the portal's methods (a stolen gateway token opens no customer's portal).

const portalOnly = ['requestPortalLink', 'redeemPortalLink', 'getPortalSession', 'endPortalSession'];

it("refuses the gateway the customer portal's sign-in and sessions, and lets the web component call them", () => {
  for (const method of portalOnly) {
    expect([method, allowed(notificationAccess, 'gateway', method)]).toEqual([method, false]);
    expect([method, allowed(notificationAccess, 'web', method)]).toEqual([method, true]);
  }
});

it('lets the gateway call what the API needs: the mail log, a licence e-mail, seat rescue, erasure', () => {
  for (const method of ['listEmails', 'sendLicenseEmail', 'requestSeatRescue', 'eraseCustomer'])
    expect([method, allowed(notificationAccess, 'gateway', method)]).toEqual([method, true]);
});
