import type { PolicySnapshot, StoredStatus } from '@licensing/proto';
import type { StoredOverrides } from './overrides';
import type { StoredSubscription } from './subscription';

/** A licence as this service keeps it: the store writes and reads exactly this (and its outbox). */
export interface LicenseRecord {
  _id: string;
  account_id: string;
  product_id: string;
  /** Canonical hyphenated form; unique across the whole system. */
  key: string;
  customer_email: string;
  /** Lower-cased copy for case-insensitive search. */
  customer_email_lc: string;
  status: StoredStatus;
  expires_at: Date | null;
  /** expires_at plus the grace days: when the licence stops validating (null = never). */
  grace_ends_at: Date | null;
  /**
   * The product's policy when the licence was issued or last renewed, with the licence's own terms
   * (`overrides`) over it: the effective policy, which every reader judges by (domain/overrides.ts).
   */
  policy: PolicySnapshot;
  /**
   * The licence's own terms, kept apart so a renewal applies them again over the product's new policy;
   * only those that differed from the product's policy when written. Absent: none.
   */
  overrides?: StoredOverrides;
  metadata: Record<string, string>;
  /**
   * Entitlements of this licence's own, on top of its policy's (set whole by UpdateLicense); missing
   * on licences stored before entitlements existed, and on those never given any: none.
   */
  extra_entitlements?: string[];
  /** license.expired was published (once, whichever instance got there first). */
  expired_notified: boolean;
  /** The UTC hour (YYYY-MM-DDTHH) the sweeper looks for this licence in; null when nothing is left to announce (domain/expiry.ts). */
  expiry_bucket: string | null;
  created_at: Date;
  /** Set when the licence follows a subscription (ApplySubscription); absent otherwise. */
  subscription?: StoredSubscription | null;
  /**
   * The subscription (sub_…) a recurring checkout issued this licence for: the only one ApplySubscription
   * applies to it. Absent on every other licence (and on those issued before it was recorded).
   */
  issued_for_subscription?: string;
  /**
   * Keys this licence had before a reroll whose grace may not be over, with when each stops validating
   * (older ones are dropped at the next reroll). Carried by its events, so caches evict them with it.
   */
  retired_keys?: RetiredKey[];
}

/** A key a licence had before a reroll, and until when it still validates. */
export interface RetiredKey {
  key: string;
  until: Date;
}
