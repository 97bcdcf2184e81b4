// Friendly names for the wire types generated from the OpenAPI document
// (generated/openapi.ts). Nothing here is written by hand but the names, so
// a change to the API's schemas changes these types too. The intersections
// add the fields of issue 27 (floating seats, entitlements) that the app-side
// SDK relies on; once the document describes them they are the same fields,
// and the intersections change nothing.
import type { components, operations } from './generated/openapi';

type Schemas = components['schemas'];

/**
 * The licence policy. `lease_seconds`: null for node-locked activations, else
 * floating seats that lapse unless heartbeated within it; `entitlements`: the
 * feature codes every licence of the product includes.
 */
export type Policy = Schemas['Policy'] & { lease_seconds?: number | null; entitlements?: string[] };
export type PolicyInput = Schemas['PolicyInput'] & { lease_seconds?: number | null; entitlements?: string[] };
export type Product = Omit<Schemas['Product'], 'policy'> & { policy: Policy };
export type ProductCreate = Omit<Schemas['ProductCreate'], 'policy'> & { policy?: PolicyInput };
export type ProductUpdate = Omit<Schemas['ProductUpdate'], 'policy'> & { policy?: PolicyInput };
export type Price = Schemas['Price'];
export type SigningKey = Schemas['SigningKey'];
/** A licence; `entitlements` is its effective set (policy ∪ the licence's own extras, sorted). */
export type License = Omit<Schemas['License'], 'policy'> & { policy: Policy; entitlements?: string[] };
export type LicenseCreate = Schemas['LicenseCreate'];
export type LicenseCreated = Omit<Schemas['LicenseCreated'], 'license'> & { license: License };
/** `entitlements` replaces the licence's own extras whole. */
export type LicenseUpdate = Schemas['LicenseUpdate'] & { entitlements?: string[] };
export type LicenseStatus = License['status'];
/** A machine's activation; `lease_expires_at` is when a floating seat lapses without a heartbeat (null: node-locked). */
export type Activation = Schemas['Activation'] & { lease_expires_at?: string | null };
export type ActivationCreate = Schemas['ActivationCreate'];
export type LicenseFile = Schemas['LicenseFile'];
export type ValidationCode = Schemas['ValidationCode'] | 'lease_expired' | 'entitlements_missing';
export type NextAction = Schemas['NextAction'];
/** A validation answer; `entitlements` is the licence's effective set ([] when there is no licence). */
export type KeyValidation = Omit<Schemas['KeyValidation'], 'code' | 'license'> & {
  code: ValidationCode;
  license: License | null;
  entitlements: string[];
};
/** `entitlements`: codes the licence must include, else the answer is `entitlements_missing`. */
export type KeyValidationRequest = Schemas['KeyValidationRequest'] & { entitlements?: string[] };
export type CheckoutSession = Schemas['CheckoutSession'];
export type CheckoutCreate = Schemas['CheckoutCreate'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type WebhookEndpointCreate = Schemas['WebhookEndpointCreate'];
export type WebhookEndpointUpdate = Schemas['WebhookEndpointUpdate'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type Status = Schemas['Status'];
export type Problem = Schemas['Problem'];

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
export type ProductListParams = Query<'listProducts'>;
export type LicenseListParams = Query<'listLicenses'>;
export type CheckoutListParams = Query<'listCheckoutSessions'>;
export type WebhookListParams = Query<'listWebhookEndpoints'>;
export type PageOnlyParams = Query<'listWebhookDeliveries'>;
