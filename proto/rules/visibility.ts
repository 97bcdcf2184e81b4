// What a validation answer shows of its licence to the API key that asked.
// validate-scope keys ship inside customers' apps, where anyone can read them:
// they never see the vendor's own metadata (order numbers, CRM ids, notes), and
// see the customer's e-mail only where the product's policy allows it
// (validate_keys_see_email). The licence service and the gateway's validation
// cache both answer through this, so a cached answer hides what the service's hides.

export function seenByScope<L extends { customer_email: string; metadata: { [key: string]: string } }>(
  license: L,
  scope: string,
  emailAllowed: boolean,
): L {
  if (scope !== 'validate') return license;
  return { ...license, customer_email: emailAllowed ? license.customer_email : '', metadata: {} };
}
