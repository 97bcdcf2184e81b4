import * as requests from '../request-shapes/operations';
import type { Shape } from '../request-shapes/shapes';
import { componentSchemas, toJsonSchema } from './shape-schema';

// The request bodies of the document, generated from the shapes the routes
// validate with, under the names (components/schemas) the SDK's types use.
// The unit tests check each operation's body against the shape its route
// actually validates with.

const bodies = {
  ProductCreate: requests.productCreate,
  ProductUpdate: requests.productUpdate,
  ReleaseCreate: requests.releaseCreate,
  LicenseCreate: requests.licenseCreate,
  LicenseUpdate: requests.licenseUpdate,
  LicenseBatchCreate: requests.licenseBatchCreate,
  LicenseReroll: requests.licenseReroll,
  ActivationCreate: requests.activationCreate,
  LicenseFileRequest: requests.licenseFileRequest,
  KeyValidationRequest: requests.keyValidationRequest,
  CheckoutCreate: requests.checkoutCreate,
  WebhookEndpointCreate: requests.webhookEndpointCreate,
  WebhookEndpointUpdate: requests.webhookEndpointUpdate,
  SubscriptionCancel: requests.subscriptionCancel,
  SubscriptionTestClock: requests.subscriptionTestClock,
  ApiKeyCreate: requests.apiKeyCreate,
  MemberInvite: requests.memberInvite,
  MemberUpdate: requests.memberUpdate,
  OwnershipTransfer: requests.ownershipTransfer,
} satisfies Record<string, Shape>;

export type RequestBodyName = keyof typeof bodies;

export const requestSchemas: Record<string, Record<string, unknown>> = {
  ...Object.fromEntries(Object.entries(bodies).map(([name, shape]) => [name, toJsonSchema(shape, { refs: true })])),
  ...componentSchemas(Object.values(bodies)),
};
