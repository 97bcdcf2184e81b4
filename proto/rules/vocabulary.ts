// Every fixed list of words the system uses, each written here once. Code takes its lists and types
// from this module: the services' checks and stores, the gateway's request shapes, OpenAPI document
// and dashboard, and through the document the SDK's types.
//
// The .proto files carry these as `string` fields with a `// a | b` comment rather than proto enums:
// under ts-proto's stringEnums an enum travels as its value NAME (ACTIVE, not active), which would change
// the gRPC values and every generated type. test/repository/vocabularies.test.ts holds those comments, the
// OpenAPI document, the stores' enum validators and docs/api.md to these lists.
import { eventTypes } from '../events';

/** The states a licence is stored in. */
export const storedLicenseStatuses = ['active', 'suspended', 'revoked'] as const;
/** The states every answer shows: the stored ones, and expired, derived from expiry plus grace (status.ts). */
export const licenseStatuses = [...storedLicenseStatuses, 'expired'] as const;
export type StoredStatus = (typeof storedLicenseStatuses)[number];
export type Status = (typeof licenseStatuses)[number];

/** What a vendor may do to a licence; which action each state allows is lifecycle.ts's table. */
export const licenseActions = ['suspend', 'reinstate', 'revoke', 'renew'] as const;
export type LicenseAction = (typeof licenseActions)[number];

/** What a refunded checkout payment does to the licence it paid for (the product policy's refund_action). */
export const refundActions = ['revoke', 'suspend'] as const satisfies readonly LicenseAction[];
export type RefundAction = (typeof refundActions)[number];

/** Why a validation answered as it did; verdict.ts decides which applies. */
export const validationCodes = [
  'valid',
  'expired_in_grace',
  'not_found',
  'product_mismatch',
  'revoked',
  'suspended',
  'expired',
  'lease_expired',
  'not_activated',
  'activation_limit_reached',
  'entitlements_missing',
  'subscription_unpaid',
] as const;
export type ValidationCode = (typeof validationCodes)[number];

/**
 * Why an activation was deactivated: a DELETE, its floating seat lapsed and was reclaimed, the
 * customer freed it in the customer portal, or the licence's max_activations was lowered below the
 * machines in use (the longest-unseen freed).
 */
export const deactivationReasons = ['requested', 'lapsed', 'customer', 'limit_lowered'] as const;
export type DeactivationReason = (typeof deactivationReasons)[number];

/** What a validation answer tells the app to do next. */
export const nextActions = [
  'none',
  'activate',
  'renew',
  'contact_vendor',
  'free_a_seat',
  'update_payment',
  'update_key',
] as const;
export type NextAction = (typeof nextActions)[number];

/** A licence batch job's states (POST /api/v1/licenses/batch), and each of its items'. */
export const licenseBatchStatuses = ['running', 'done'] as const;
export type LicenseBatchStatus = (typeof licenseBatchStatuses)[number];
export const licenseBatchItemStatuses = ['issued', 'waiting', 'failed'] as const;
export type LicenseBatchItemStatus = (typeof licenseBatchItemStatuses)[number];

/** An account's plan (its hourly quota: the gateway's rate limits). */
export const plans = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof plans)[number];

/** What an API key may call: everything, or only the app's routes (validation and the like). */
export const keyScopes = ['full', 'validate'] as const;
export type KeyScope = (typeof keyScopes)[number];

/** A checkout session's states (expired is also derived from expires_at before the sweeper records it). */
export const checkoutStatuses = ['open', 'complete', 'expired'] as const;
export type CheckoutStatus = (typeof checkoutStatuses)[number];

/** Who takes a checkout's payment: the built-in test mode, or Stripe. */
export const paymentProviders = ['test', 'stripe'] as const;
export type PaymentProviderName = (typeof paymentProviders)[number];

/** Where a session stands for its hosted page (CheckoutPage.state): paid_here is paid by the asking browser. */
export const checkoutPageStates = ['not_found', 'expired', 'complete', 'paid_here', 'open'] as const;
export type CheckoutPageState = (typeof checkoutPageStates)[number];

/**
 * What paying on the hosted page came to (PayCheckoutResponse.outcome): lapsed is a session that
 * expired while it was being paid (nothing charged); not_payable_here is not paid with a card here.
 */
export const checkoutPayOutcomes = [
  'paid',
  'form_expired',
  'not_found',
  'expired',
  'already_paid',
  'not_payable_here',
  'invalid_email',
  'declined',
  'lapsed',
] as const;
export type CheckoutPayOutcome = (typeof checkoutPayOutcomes)[number];

/** What going back from the hosted page came to (CancelCheckoutResponse.outcome). */
export const checkoutCancelOutcomes = ['cancelled', 'form_expired', 'not_found', 'expired', 'already_paid'] as const;
export type CheckoutCancelOutcome = (typeof checkoutCancelOutcomes)[number];

/** What a new card on the test-mode billing page came to (CheckoutBilling.outcome). */
export const billingCardOutcomes = ['updated', 'declined', 'canceled'] as const;
export type BillingCardOutcome = (typeof billingCardOutcomes)[number];

/** A subscription's states (checkout service); its licence follows them. */
export const subscriptionStatuses = ['trialing', 'active', 'past_due', 'canceled', 'unpaid'] as const;
export type SubscriptionStatus = (typeof subscriptionStatuses)[number];

/** What changed in a subscription, as its licence is told (ApplySubscription): chooses the license.* events. */
export const subscriptionChanges = ['created', 'renewed', 'past_due', 'unpaid', 'canceled', 'updated'] as const;
export type SubscriptionChange = (typeof subscriptionChanges)[number];

/** How often a recurring price bills (with its interval_count); a one-time price has none. */
export const priceIntervals = ['month', 'year'] as const;
export type PriceInterval = (typeof priceIntervals)[number];

/** A subscription invoice's states. */
export const invoiceStatuses = ['paid', 'failed', 'open'] as const;
export type InvoiceStatus = (typeof invoiceStatuses)[number];

/** Why a subscription's invoice was taken back: refunded in full, or disputed (a chargeback). */
export const refundCauses = ['refund', 'dispute'] as const;
export type RefundCause = (typeof refundCauses)[number];

/** A webhook delivery's states. */
export const deliveryStatuses = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/**
 * A customer e-mail's states (notification service): queued until sent, failed once its retries run out;
 * deferred while its account's mail quota (mail-quota.ts) is spent, then queued when the quota allows.
 */
export const emailStatuses = ['queued', 'deferred', 'sent', 'failed'] as const;
export type EmailStatus = (typeof emailStatuses)[number];

/** The customer e-mails the notification service sends. */
export const emailTemplates = ['purchase', 'portal_link', 'seat_rescue'] as const;
export type EmailTemplate = (typeof emailTemplates)[number];

/** What a webhook endpoint may subscribe to: every domain event, and the test event the vendor can send it. */
export const webhookEventTypes = [...eventTypes, 'webhook.test'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/** Whether a word from outside (a request, a stored document) is one of the list's. */
export const isOneOf = <W extends string>(list: readonly W[], word: unknown): word is W =>
  typeof word === 'string' && (list as readonly string[]).includes(word);

/**
 * The part of the checkout service that gRPC health Check answers for by this name: SERVING while payments
 * can be taken, NOT_SERVING while Stripe is chosen and its keys are not given yet (the gateway's
 * /api/v1/status says "payments": "not configured").
 */
export const PAYMENTS_HEALTH = 'payments';
/** What /api/v1/status says of payments. */
export const paymentsStates = ['configured', 'not configured', 'unknown'] as const;
export type PaymentsState = (typeof paymentsStates)[number];

/**
 * A release's channel: who is offered it. stable for everyone; beta, alpha and dev for those who opt in
 * to less finished versions. Given at creation, or taken from the version's pre-release tag.
 */
export const releaseChannels = ['stable', 'beta', 'alpha', 'dev'] as const;
export type ReleaseChannel = (typeof releaseChannels)[number];

/** A release's states: a draft until published; a yanked one (from either) is never offered again. */
export const releaseStatuses = ['draft', 'published', 'yanked'] as const;
export type ReleaseStatus = (typeof releaseStatuses)[number];

/** The operating system a release's file is for (any: a file for every one, e.g. a JAR). */
export const artifactPlatforms = ['macos', 'windows', 'linux', 'any'] as const;
export type ArtifactPlatform = (typeof artifactPlatforms)[number];

/** The processor a release's file is for (universal: one file for several, as macOS builds them). */
export const artifactArchs = ['x86_64', 'aarch64', 'universal', 'any'] as const;
export type ArtifactArch = (typeof artifactArchs)[number];

/**
 * What a licence may download once it has expired (its policy's expiration_strategy): restrict, nothing;
 * maintain_access, the releases published before its expiry ("pay once, keep what you had");
 * revoke_access, nothing, and the licence is revoked at its expiry.
 */
export const expirationStrategies = ['restrict', 'maintain_access', 'revoke_access'] as const;
export type ExpirationStrategy = (typeof expirationStrategies)[number];

/** The files POST /api/v1/imports takes (docs/api.md "Imports" maps each one's columns). */
export const importFormats = ['jsonl', 'csv', 'keygen', 'lemonsqueezy', 'gumroad'] as const;
export type ImportFormatName = (typeof importFormats)[number];
/** An import's or an export's job: running, done or failed. */
export const jobStatuses = ['running', 'done', 'failed'] as const;
/** An export: its job's, or expired once done and its file deleted (past its 24 hours, or by an erasure). */
export const exportStatuses = [...jobStatuses, 'expired'] as const;
