// Friendly names for the wire types generated from the OpenAPI document
// (generated/openapi.ts). Nothing here is written by hand but the names, so
// a change to the API's schemas changes these types too.
import type { components, operations } from './generated/openapi';

type Schemas = components['schemas'];

export type Product = Schemas['Product'];
export type ProductCreate = Schemas['ProductCreate'];
export type ProductUpdate = Schemas['ProductUpdate'];
/** The licence policy (`lease_seconds`: null = node-locked; `entitlements`: the product's feature codes). */
export type Policy = Schemas['Policy'];
export type PolicyInput = Schemas['PolicyInput'];
export type Price = Schemas['Price'];
export type SigningKey = Schemas['SigningKey'];
/** A licence; `entitlements` is its effective set (the product's ∪ the licence's own extras, sorted). */
export type License = Schemas['License'];
export type LicenseCreate = Schemas['LicenseCreate'];
export type LicenseCreated = Schemas['LicenseCreated'];
/** `entitlements` replaces the licence's own extras whole. */
export type LicenseUpdate = Schemas['LicenseUpdate'];
export type LicenseBatch = Schemas['LicenseBatch'];
export type LicenseBatchCreate = Schemas['LicenseBatchCreate'];
export type LicenseReroll = Schemas['LicenseReroll'];
export type LicenseStatus = License['status'];
/** A machine's activation; `lease_expires_at` is when a floating seat lapses without a heartbeat (null: node-locked). */
export type Activation = Schemas['Activation'];
export type ActivationCreate = Schemas['ActivationCreate'];
export type LicenseFile = Schemas['LicenseFile'];
export type ValidationCode = Schemas['ValidationCode'];
export type NextAction = Schemas['NextAction'];
/** A validation answer; `entitlements` is the licence's effective set ([] when there is no licence). */
export type KeyValidation = Schemas['KeyValidation'];
/** `entitlements`: codes the licence must include, else the answer is `entitlements_missing`. */
export type KeyValidationRequest = Schemas['KeyValidationRequest'];
export type CheckoutSession = Schemas['CheckoutSession'];
export type CheckoutCreate = Schemas['CheckoutCreate'];
/** A subscription; `invoices` are filled on `get` only. */
export type Subscription = Schemas['Subscription'];
export type BillingPortal = Schemas['BillingPortal'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type WebhookEndpointCreate = Schemas['WebhookEndpointCreate'];
export type WebhookEndpointUpdate = Schemas['WebhookEndpointUpdate'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type Status = Schemas['Status'];
/** The answer of a seat rescue: queued (it never says where the mail goes). */
export type SeatRescue = Schemas['SeatRescue'];
/** The answer of a customer's erasure: the placeholder that replaced the e-mail everywhere. */
export type CustomerErasure = Schemas['CustomerErasure'];
export type Problem = Schemas['Problem'];
/** A version of a product: a draft until published, yanked once withdrawn; `artifacts` are its files. */
export type Release = Schemas['Release'];
/** `channel` defaults from the version's pre-release tag (beta for -beta.1 and -rc.1), else stable. */
export type ReleaseCreate = Schemas['ReleaseCreate'];
export type ReleaseChannel = Release['channel'];
export type ReleaseStatus = Release['status'];
/** One file of a release, as listed in it and as an upload answers it; `sha256` is computed by the server. */
export type Artifact = Release['artifacts'][number];
export type ArtifactPlatform = Artifact['platform'];
export type ArtifactArch = Artifact['arch'];

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
export type ProductListParams = Query<'listProducts'>;
export type LicenseListParams = Query<'listLicenses'>;
export type CheckoutListParams = Query<'listCheckoutSessions'>;
export type SubscriptionListParams = Query<'listSubscriptions'>;
export type WebhookListParams = Query<'listWebhookEndpoints'>;
export type PageOnlyParams = Query<'listWebhookDeliveries'>;
export type ReleaseListParams = Query<'listReleases'>;
