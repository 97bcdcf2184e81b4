import type {
  CheckoutServiceService,
  EraseCustomerRequest,
  LicenseServiceService,
  NotificationServiceService,
  WebhookServiceService,
} from '@licensing/proto';
import type { FakeHandlers } from '@licensing/test-support';

// What each service's EraseCustomer answers, over the customer addresses a test holds per service (as
// each service's store): every address of the account equal to the e-mail, whatever its case, becomes the
// placeholder, and the answer counts them (a repeat finds none). `order` records the calls as they arrive.

export type ErasingService = 'license' | 'checkout' | 'webhook' | 'notification';
export interface HeldAddress {
  account_id: string;
  email: string;
}

export function erasing(held: Record<ErasingService, HeldAddress[]>, order: ErasingService[]) {
  const erase = (service: ErasingService) => (req: EraseCustomerRequest) => {
    order.push(service);
    let erased = 0;
    for (const a of held[service])
      if (a.account_id === req.account_id && a.email.toLowerCase() === req.email.trim().toLowerCase()) {
        a.email = req.placeholder;
        erased++;
      }
    return { erased };
  };
  return {
    license: { eraseCustomer: erase('license') } as FakeHandlers<typeof LicenseServiceService>,
    checkout: { eraseCustomer: erase('checkout') } as FakeHandlers<typeof CheckoutServiceService>,
    webhook: { eraseCustomer: erase('webhook') } as FakeHandlers<typeof WebhookServiceService>,
    notification: { eraseCustomer: erase('notification') } as FakeHandlers<typeof NotificationServiceService>,
  };
}
