import type { LicenseServiceClient } from '@licensing/proto';
import type { createClient } from '@licensing/runtime';
import { client, type Stack } from './stack';

/**
 * A new vendor with one product (10 machines per licence, and the policy given), for tests of what
 * customers do with their machines: issue licences to e-mails, activate machines, and read them
 * back over the licence service's gRPC (as the gateway does).
 */
export async function machineVendor(
  stack: Stack,
  licenses: ReturnType<typeof createClient<LicenseServiceClient>>,
  policy: Record<string, unknown> = {},
) {
  const { accountId, apiKey } = await stack.newAccount();
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000 });
  const api = client(stack.url, apiKey);
  const product = (
    await api('POST', '/api/v1/products', {
      name: 'Editor',
      price: { amount: 4900, currency: 'EUR' },
      policy: { max_activations: 10, ...policy },
    })
  ).body.id as string;
  const issue = async (email: string) =>
    (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: email })).body.license_key as string;
  const machine = async (key: string, fingerprint: string, name = '') =>
    (await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint, name })).body.id as string;
  const machines = async (key: string) =>
    (await licenses.call.listActivations({ account_id: accountId, key, page: { limit: 100, starting_after: '' } }))
      .data;
  return { accountId, api, product, issue, machine, machines };
}
