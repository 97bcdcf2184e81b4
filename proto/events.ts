// Domain event contract: the envelope and the catalogue of types. Publishers and
// consumers import these; nothing else about events crosses a service boundary.
import type {
  CheckoutStatus,
  DeactivationReason,
  ArtifactArch,
  ArtifactPlatform,
  KeyScope,
  Plan,
  ReleaseChannel,
  ReleaseStatus,
  Status,
  SubscriptionStatus,
} from './rules/vocabulary';

export const eventTypes = [
  'account.updated',
  'product.created',
  'product.updated',
  'release.published',
  'release.yanked',
  'license.created',
  'license.updated',
  'license.suspended',
  'license.reinstated',
  'license.revoked',
  'license.renewed',
  'license.expired',
  'license.activated',
  'license.deactivated',
  'license.rerolled',
  'license.deleted',
  'license.batch_completed',
  'checkout.created',
  'checkout.completed',
  'checkout.expired',
  'subscription.created',
  'subscription.renewed',
  'subscription.past_due',
  'subscription.canceled',
  'subscription.updated',
  'webhook.disabled',
  'api_key.created',
  'api_key.revoked',
  'customer.erased',
] as const;
export type EventType = (typeof eventTypes)[number];

/** Envelope of every event on NATS (`<prefix>.<type>`); `id` is also the Nats-Msg-Id. */
export interface DomainEvent<T extends EventType = EventType> {
  id: string;
  type: T;
  account_id: string;
  created_at: string;
  /** The API request that caused the event, when one did (absent for sweeps and timers). */
  request_id?: string;
  /**
   * The W3C trace context of the call that caused it, when that call was traced (OpenTelemetry on):
   * consumers continue its trace. Internal: never part of a webhook's body.
   */
  traceparent?: string;
  /**
   * license.created and license.rerolled only: the API call asked for the licence mail (send_email),
   * recorded in the same write as the change; the notification service's durable consumers queue it
   * (keyed by the event id). Internal: never part of a webhook's body.
   */
  send_email?: true;
  /**
   * Who made the change and from where, when a request did (absent for the system's own work: a
   * sweep, a payment, a renewal). The audit log's source. Internal: never part of a webhook's body.
   */
  origin?: RequestOrigin;
  data: EventData[T];
}

/**
 * The account service's own actions that are recorded in the audit log only: published on the stream
 * through its outbox as events are (so never lost), and never delivered to a webhook endpoint. One of
 * the lists of audit-only actions (actionTypes below), each a service's.
 */
export const accountActionTypes = [
  'password.changed',
  'password.reset',
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'member.ownership_transferred',
  'session.signed_in',
  'session.sign_in_failed',
  'mfa.enabled',
  'mfa.disabled',
  'settings.updated',
] as const;
export type AccountActionType = (typeof accountActionTypes)[number];

/**
 * What an account action is about: the person who signs in (password.*, session.*, mfa.*), a member
 * (member.*), or the account's settings (settings.updated: the names of the settings changed).
 */
export interface AccountActionData {
  user?: { id: string; email: string };
  settings?: { changed: string[] };
  member?: { id: string; email: string; role: string; previous_role?: string };
}

/** The envelope of an account action (as DomainEvent's, with its own types and data). */
export type AccountActionEvent = ActionEvent<AccountActionType, AccountActionData>;

/**
 * The licence service's actions recorded in the audit log only (its transfer module): an import or an
 * export started. Published through the new import's or export's outbox, in the write that stores it,
 * and never delivered to a webhook endpoint, as an account action.
 */
export const transferActionTypes = ['import.created', 'export.created'] as const;
export type TransferActionType = (typeof transferActionTypes)[number];

/** What a transfer action is about: the import (with its file's format) or the export, by id. */
export interface TransferActionData {
  import?: { id: string; format: string };
  export?: { id: string };
}

/** The envelope of a transfer action. */
export type TransferActionEvent = ActionEvent<TransferActionType, TransferActionData>;

/**
 * The product service's actions recorded in the audit log only: a product archived, put back on sale,
 * or deleted. Archiving and unarchiving also publish product.updated (what caches and webhooks follow);
 * these say which change it was. Published through the product's outbox (a deletion's through its
 * deletion record), never delivered to a webhook endpoint.
 */
export const productActionTypes = ['product.archived', 'product.unarchived', 'product.deleted'] as const;
export type ProductActionType = (typeof productActionTypes)[number];

/** What a product action is about: the product, by id and name. */
export interface ProductActionData {
  product: { id: string; name: string };
}

/** The envelope of a product action. */
export type ProductActionEvent = ActionEvent<ProductActionType, ProductActionData>;

/**
 * Every audit-only action, whichever service owns it (packages/runtime's nats-access.ts gives each
 * family its owner): on the stream with the events, in the audit log, never a webhook's.
 */
export const actionTypes = [...accountActionTypes, ...transferActionTypes, ...productActionTypes] as const;
export type ActionType = (typeof actionTypes)[number];

/** The envelope of an audit-only action (as DomainEvent's, with the action's own types and data). */
export type ActionEvent<
  T extends ActionType = ActionType,
  D = AccountActionData | TransferActionData | ProductActionData,
> = Omit<DomainEvent, 'type' | 'data'> & {
  type: T;
  data: D;
};

/** Whether a type is a domain event's (what webhooks deliver), not an audit-only action's. */
export const isEventType = (type: string): type is EventType => (eventTypes as readonly string[]).includes(type);

/** Whether a type is an audit-only action's (any service's), never delivered to a webhook. */
export const isActionType = (type: string): type is ActionType => (actionTypes as readonly string[]).includes(type);

/** Who acts in a request: the audit log's actor types (docs/api.md, "Audit log"). */
export const actorTypes = ['member', 'api_key', 'license', 'system'] as const;
export type ActorType = (typeof actorTypes)[number];

/**
 * Who acts: a dashboard member (id mem_… or the sign-in's user id, name their e-mail), an API key
 * (id key_…), an app signed in with its licence's own key (id the licence's), or the system.
 */
export interface Actor {
  type: ActorType;
  id: string;
  /** A member's e-mail, or a key's name, when the edge knows it. */
  name?: string;
}

/**
 * The actor id of a dashboard request made before anyone is signed in (a sign-in, a reset or
 * invitation link): the account service names the person the action is about instead.
 */
export const VISITOR_ACTOR_ID = 'visitor';

/** Who made a request and from where: what the edge learns and every call it makes carries on. */
export interface RequestOrigin {
  actor: Actor;
  /** The client's address as the edge saw it (behind a trusted proxy, the address it forwarded). */
  ip?: string;
  user_agent?: string;
}

/**
 * One event of any of these types, told apart by `type`: what a handler of several types receives,
 * so `if (event.type === 'product.updated')` gives it that type's `data` without a cast.
 */
export type EventOf<T extends EventType = EventType> = { [K in T]: DomainEvent<K> }[T];

/** The family of an event type: the part before the dot (`license` of `license.created`). */
export type EventFamily = EventType extends infer T ? (T extends `${infer F}.${string}` ? F : never) : never;

/** What a consumer names to follow: one event type, or every type of a family, now or later (`license.>`). */
export type EventPattern = EventType | `${EventFamily}.>`;

/** The event types a pattern stands for. */
export type EventsMatching<P extends EventPattern> = P extends `${infer F}.>`
  ? Extract<EventType, `${F}.${string}`>
  : Extract<EventType, P>;

export interface ProductData {
  id: string;
  name: string;
  description: string;
  created_at: string;
  /**
   * When it was archived (it sells and issues nothing new); null while on sale. Absent from events
   * published before products could be archived (on sale, then).
   */
  archived_at?: string | null;
}

/** A file of a release, as the REST API shows it (where the file is kept is no part of it). */
export interface ArtifactData {
  filename: string;
  platform: ArtifactPlatform;
  arch: ArtifactArch;
  size: number;
  sha256: string;
  /** As the vendor sent it; null without one. */
  signature: string | null;
  downloads: number;
  created_at: string;
}

/** A release of a product, as the REST API shows it: absent text and times are null. */
export interface ReleaseData {
  id: string;
  product_id: string;
  version: string;
  channel: ReleaseChannel;
  status: ReleaseStatus;
  notes: string | null;
  published_at: string | null;
  yanked_at: string | null;
  entitlements: string[];
  artifacts: ArtifactData[];
  created_at: string;
}

export interface LicenseData {
  id: string;
  key: string;
  product_id: string;
  customer_email: string;
  status: Status;
  expires_at: string | null;
  created_at: string;
  /** The effective entitlements: the policy's and the licence's extras, sorted (rules/entitlements.ts). */
  entitlements: string[];
  /**
   * Keys the licence had before a reroll, with when each stops validating; present only on licences
   * rerolled while those keys may still be in their grace (caches evict them with the licence).
   */
  previous_keys?: { key: string; valid_until: string }[];
}

/** A batch of licences issued (POST /api/v1/licenses/batch): the summary, besides each license.created. */
export interface LicenseBatchData {
  id: string;
  product_id: string;
  total: number;
  issued: number;
  failed: number;
  created_at: string;
  completed_at: string;
}

export interface ActivationData {
  id: string;
  license_id: string;
  license_key: string;
  fingerprint: string;
  name: string;
  created_at: string;
  /** When a floating seat lapses unless heartbeated; null for a node-locked activation. */
  lease_expires_at: string | null;
}

export interface ApiKeyData {
  id: string;
  prefix: string;
  scope: KeyScope;
  name: string;
  created_at: string;
  revoked_at?: string;
  /** Who did it: a user's e-mail, or "operator". */
  actor: string;
}

export interface AccountData {
  id: string;
  name: string;
  plan: Plan;
  /** null = the plan's default */
  per_minute_limit: number | null;
  per_hour_limit: number | null;
}

export interface CheckoutData {
  id: string;
  product_id: string;
  status: CheckoutStatus;
  amount: number;
  currency: string;
  customer_email: string | null;
  expires_at: string;
  created_at: string;
  /** true only for a real payment (a live Stripe key); false in test mode and with Stripe test keys. */
  livemode: boolean;
}

export interface SubscriptionData {
  id: string;
  status: SubscriptionStatus;
  product_id: string;
  customer_email: string;
  license_key: string;
  quantity: number;
  current_period_start: string;
  current_period_end: string;
  cancel_at_period_end: boolean;
  trial_end: string | null;
  livemode: boolean;
  created_at: string;
}

export interface EventData {
  'account.updated': { account: AccountData };
  'product.created': { product: ProductData };
  'product.updated': { product: ProductData };
  /** A draft release was published: it is offered from now on (on its channel, to licences with its entitlements). */
  'release.published': { release: ReleaseData };
  /** A release was withdrawn: it is never offered again, and its files are no longer handed out. */
  'release.yanked': { release: ReleaseData };
  'license.created': { license: LicenseData };
  'license.updated': { license: LicenseData };
  'license.suspended': { license: LicenseData };
  'license.reinstated': { license: LicenseData };
  'license.revoked': { license: LicenseData };
  'license.renewed': { license: LicenseData };
  'license.expired': { license: LicenseData };
  'license.activated': { license: LicenseData; activation: ActivationData };
  /**
   * reason: requested (a DELETE), lapsed (a floating seat reclaimed after its lease ran out), customer
   * (freed in the customer portal) or limit_lowered (the licence's max_activations lowered below its
   * machines: the longest-unseen freed).
   */
  'license.deactivated': { license: LicenseData; activation: ActivationData; reason: DeactivationReason };
  /** The licence (with its new key) and the key it had, which validates until previous_key_valid_until. */
  'license.rerolled': { license: LicenseData; previous_key: string; previous_key_valid_until: string };
  /** The licence as it was when its account deleted it (DELETE /api/v1/licenses/{key}); its key no longer validates. */
  'license.deleted': { license: LicenseData };
  'license.batch_completed': { batch: LicenseBatchData };
  'checkout.created': { checkout: CheckoutData };
  'checkout.expired': { checkout: CheckoutData };
  'checkout.completed': { checkout: CheckoutData; license_key: string; customer_email: string };
  'subscription.created': { subscription: SubscriptionData };
  'subscription.renewed': { subscription: SubscriptionData };
  'subscription.past_due': { subscription: SubscriptionData };
  'subscription.canceled': { subscription: SubscriptionData };
  'subscription.updated': { subscription: SubscriptionData };
  'webhook.disabled': { endpoint: { id: string; url: string }; reason: string };
  'api_key.created': { api_key: ApiKeyData };
  'api_key.revoked': { api_key: ApiKeyData };
  /**
   * DELETE /api/v1/customers/{email} finished: every service replaced the e-mail with `placeholder`.
   * The e-mail itself is never in the event (the stream and webhook logs keep events).
   */
  'customer.erased': { placeholder: string; licenses: number };
}
