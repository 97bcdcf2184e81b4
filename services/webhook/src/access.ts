import type { WebhookServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the webhook service: only the gateway. */
export const webhookAccess: AccessPolicyOf<typeof WebhookServiceService> = {
  gateway: [
    'createEndpoint',
    'listEndpoints',
    'getEndpoint',
    'updateEndpoint',
    'deleteEndpoint',
    'rotateSecret',
    'listDeliveries',
    'retryDelivery',
    'sendTestEvent',
    'eraseCustomer',
  ],
};
