import { Schema, type Connection, type Model } from 'mongoose';
import { idempotencyModel, outboxFields } from '@licensing/runtime';
import {
  deactivationReasons,
  storedLicenseStatuses,
  type DeactivationReason,
  type DomainEvent,
} from '@licensing/proto';
import type { LicenseRecord } from '../domain/license';
import { rerollModels } from './retired-keys';

/** A licence document: the record (domain/license.ts) and the events still to publish with it. */
export interface LicenseDoc extends LicenseRecord {
  /** An imported licence's import and row (transfer/use-cases/import-run.ts). */
  imported_from?: { import_id: string; row: number };
  outbox?: Record<string, DomainEvent>;
}

export interface ActivationDoc {
  _id: string;
  license_id: string;
  account_id: string;
  fingerprint: string;
  name: string;
  /**
   * Unique per licence while active: "1".."max" (or the id when unlimited). Two
   * requests cannot take the same slot, so max_activations holds under any
   * concurrency without transactions. Set to "freed:<id>" on deactivation.
   */
  slot_key: string;
  /** The fingerprint while active (unique per licence), "freed:<id>" after. */
  fingerprint_key: string;
  created_at: Date;
  deactivated_at: Date | null;
  /**
   * A DELETE (requested), a lapsed floating seat reclaimed, or the customer in the portal (customer);
   * absent while active, and on older records. With deactivated_at it is also the record of the
   * customer's deactivations that the policy's customer_deactivations_per_30_days counts.
   */
  deactivated_reason?: DeactivationReason;
  /**
   * When the machine's last heartbeat (or re-activation) was. A validation naming its fingerprint is
   * kept apart, in machine_sightings (SightingDoc), and the later of the two is what a reader is shown.
   */
  last_seen_at?: Date | null;
  /** When a floating seat lapses unless heartbeated; null (or absent, on older records) when node-locked. */
  lease_expires_at?: Date | null;
  /**
   * The hour (domain/leases.ts) in which the lapsed-seat sweep reclaims this seat if no heartbeat
   * moves it on; null when node-locked or deactivated. The sweep finds seats by equality on it.
   */
  reclaim_bucket?: string | null;
  outbox?: Record<string, DomainEvent>;
}

/**
 * One EraseCustomer call: carries its customer.erased event through the outbox (an event is stored with
 * a document, and a call that changed no licence has none). Holds the placeholder, never the e-mail.
 */
/**
 * A licence its account deleted: carries its license.deleted event through the outbox (the licence's
 * own document, which would carry it, is gone), and is the deletion's claim (its _id is the licence's).
 */
export interface LicenseDeletionDoc {
  _id: string;
  account_id: string;
  created_at: Date;
  outbox?: Record<string, DomainEvent>;
}

export interface ErasureDoc {
  _id: string;
  account_id: string;
  placeholder: string;
  licenses: number;
  created_at: Date;
  outbox?: Record<string, DomainEvent>;
}

/**
 * When a validation last named a fingerprint of a licence, written by the validation counts' flush. It is
 * a document of its own, never a field of the activation: FerretDB's updates are not atomic (read, change,
 * write back), so a background write to the activation could put back a deactivation made meanwhile.
 */
export interface SightingDoc {
  /** `${license_id}:${fingerprint}` */
  _id: string;
  license_id: string;
  fingerprint: string;
  last_seen_at: Date;
}

/** How far the expiry sweeper got: every bucket up to `through` is done. */
export interface SweepStateDoc {
  _id: string;
  through: string | null;
  /** Licences written before buckets existed were given theirs (once). */
  backfilled: boolean;
}

/** A licence, with an index for each filter of the licence list. */
function licenseSchema(): Schema<LicenseDoc> {
  const schema = new Schema<LicenseDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      product_id: { type: String, required: true },
      key: { type: String, required: true, unique: true },
      customer_email: { type: String, required: true },
      customer_email_lc: { type: String, required: true },
      status: { type: String, required: true, enum: storedLicenseStatuses },
      expires_at: { type: Date, default: null },
      grace_ends_at: { type: Date, default: null },
      policy: { type: Object, required: true },
      // The licence's own terms (domain/overrides.ts): null is a value there (unlimited, node-locked).
      overrides: { type: Object, default: undefined },
      metadata: { type: Object, default: () => ({}) },
      extra_entitlements: { type: [String], default: undefined },
      expired_notified: { type: Boolean, default: false },
      expiry_bucket: { type: String, default: null },
      created_at: { type: Date, required: true },
      subscription: { type: Object, default: undefined },
      issued_for_subscription: { type: String, default: undefined },
      // An imported licence's import and row (transfer/use-cases/import-run.ts: a resumed run knows its own rows).
      imported_from: { type: Object, default: undefined },
      retired_keys: { type: [{ _id: false, key: String, until: Date }], default: undefined },
      ...outboxFields,
    },
    { versionKey: false, collection: 'licenses' },
  );
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ account_id: 1, product_id: 1, _id: -1 });
  schema.index({ account_id: 1, customer_email_lc: 1, _id: -1 });
  // Each filter of the licence list leads an index of its own: with only account_id leading, a page of
  // the few suspended licences read the account's whole index (test/repository/list-filter-indexes.test.ts).
  schema.index({ account_id: 1, status: 1, _id: -1 });
  schema.index({ expiry_bucket: 1, _id: 1 });
  return schema;
}

/** A seat of a licence: one machine's activation (slot_key and fingerprint_key unique per licence). */
function activationSchema(): Schema<ActivationDoc> {
  const schema = new Schema<ActivationDoc>(
    {
      _id: String,
      license_id: { type: String, required: true },
      account_id: { type: String, required: true },
      fingerprint: { type: String, required: true },
      name: { type: String, default: '' },
      slot_key: { type: String, required: true },
      fingerprint_key: { type: String, required: true },
      created_at: { type: Date, required: true },
      deactivated_at: { type: Date, default: null },
      deactivated_reason: { type: String, enum: deactivationReasons },
      lease_expires_at: { type: Date, default: null },
      reclaim_bucket: { type: String, default: null },
      last_seen_at: { type: Date, default: null },
      ...outboxFields,
    },
    { versionKey: false, collection: 'activations' },
  );
  schema.index({ license_id: 1, slot_key: 1 }, { unique: true });
  schema.index({ license_id: 1, _id: -1 }); // a licence's activations, newest first
  schema.index({ license_id: 1, fingerprint_key: 1 }, { unique: true });
  schema.index({ reclaim_bucket: 1, _id: 1 }); // the lapsed-seat sweep: one equality per hour bucket
  // A licence's customer deactivations of the last 30 days (the portal's limit): one read of a few entries.
  schema.index({ license_id: 1, deactivated_reason: 1, deactivated_at: 1 });
  return schema;
}

export function licenseModels(conn: Connection) {
  const sighting = new Schema<SightingDoc>(
    {
      _id: String,
      license_id: { type: String, required: true },
      fingerprint: { type: String, required: true },
      last_seen_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'machine_sightings' },
  );
  sighting.index({ license_id: 1 }); // a licence's machines, read with a page of its activations
  const sweep = new Schema<SweepStateDoc>(
    { _id: String, through: { type: String, default: null }, backfilled: { type: Boolean, default: false } },
    { versionKey: false, collection: 'sweep_state' },
  );
  const erasure = new Schema<ErasureDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      placeholder: { type: String, required: true },
      licenses: { type: Number, required: true },
      created_at: { type: Date, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'customer_erasures' },
  );
  const deletion = new Schema<LicenseDeletionDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      created_at: { type: Date, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'license_deletions' },
  );
  return {
    ...rerollModels(conn),
    LicenseDeletion: conn.model<LicenseDeletionDoc>('LicenseDeletion', deletion) as Model<LicenseDeletionDoc>,
    Erasure: conn.model<ErasureDoc>('CustomerErasure', erasure) as Model<ErasureDoc>,
    SweepState: conn.model<SweepStateDoc>('SweepState', sweep) as Model<SweepStateDoc>,
    License: conn.model<LicenseDoc>('License', licenseSchema()) as Model<LicenseDoc>,
    Activation: conn.model<ActivationDoc>('Activation', activationSchema()) as Model<ActivationDoc>,
    Sighting: conn.model<SightingDoc>('MachineSighting', sighting) as Model<SightingDoc>,
    Idempotency: idempotencyModel(conn),
  };
}

export type LicenseModels = ReturnType<typeof licenseModels>;
