import type { WebhookServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the webhook service: the gateway, and the licence service's imports (an export's endpoints). */
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
  // An import of an export makes its webhook endpoints (with new secrets), skipping those already there.
  license: ['createEndpoint', 'listEndpoints'],
  // The web component's dashboard: endpoints and their deliveries.
  web: [
    'createEndpoint',
    'getEndpoint',
    'listEndpoints',
    'updateEndpoint',
    'rotateSecret',
    'sendTestEvent',
    'listDeliveries',
    'retryDelivery',
  ],
};
