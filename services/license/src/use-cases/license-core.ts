import { newId, type Outbox } from '@licensing/runtime';
import {
  graceEndsAt,
  withPolicyDefaults,
  type DomainEvent,
  type LicensePolicy,
  type PolicySnapshot,
  type Product,
} from '@licensing/proto';
import { storedPolicy, withProductEntitlements } from '../domain/entitlements';
import { expiryBucket } from '../domain/expiry';
import type { LicenseRecord } from '../domain/license';
import { newLicense } from '../domain/new-license';
import { licenseCreated, licenseEvent } from '../events/license-events';
import type { BulkLicenses } from '../store/bulk-licenses';
import type { ActivationDoc, LicenseDoc } from '../store/models';
import type { RetiredKeyDoc } from '../store/retired-keys';
import { leaseOf } from './activations';

// The one door of the licence core to the transfer module (src/transfer/: imports, exports, licence
// batches). The transfer module owns its jobs and their collections; every licence and machine it
// brings into being is built and written here, through this table, so a licence has one write path
// (these rules, these stores, these events) whoever asks for it. main.ts gives the module this table
// and nothing else of the core.

export type { ActivationDoc, LicenseDoc, RetiredKeyDoc };

/** A licence as an import row describes it (transfer/domain/import-rows.ts, ImportRow, is one). */
export interface ImportedLicenseInput {
  key: string;
  customer_email: string;
  /** expired is stored active: a licence's expiry is derived from its expires_at, as for every licence. */
  status: 'active' | 'suspended' | 'revoked' | 'expired';
  expires_at: Date | null;
  /** undefined: the policy decides; null: unlimited. */
  max_activations: number | null | undefined;
  /** The licence's own policy (an export's line); undefined: its product's. */
  policy?: LicensePolicy;
  activations: { fingerprint: string; name: string }[];
  metadata: Record<string, string>;
  entitlements: string[];
}

/** Where a licence came from: the import and its row (what makes a resumed run recognise its own rows). */
export interface ImportedFrom {
  import_id: string;
  row: number;
}

/** An imported licence as it will be written: the licence, its machines, and its license.created. */
export interface ImportedLicense {
  doc: Omit<LicenseDoc, 'outbox'> & { imported_from: ImportedFrom };
  activations: ActivationDoc[];
  events: DomainEvent[];
}

/** One item of a licence batch: its licence id fixed when the batch was stored, and what it asks. */
export interface BatchLicenseItem {
  license_id: string;
  customer_email: string;
  metadata?: Record<string, string>;
  entitlements?: string[];
}

/** What the transfer module may ask of the licence core: nothing more. */
export interface LicenseCore {
  /** The licence an import row makes, not yet written (its ids and event ids derived from it). */
  importedLicense(
    imp: { _id: string; account_id: string },
    row: number,
    data: ImportedLicenseInput,
    product: Product,
    now: Date,
  ): ImportedLicense;
  /** The policy an imported licence stores: its own (an export's line), else its product's; max_activations over either. */
  importedPolicy(data: ImportedLicenseInput, product: Product): PolicySnapshot;
  /** The machines an import row gives a stored licence. */
  importedMachines(
    license: Pick<LicenseDoc, '_id' | 'account_id' | 'policy'>,
    data: ImportedLicenseInput,
    now: Date,
  ): ActivationDoc[];
  /** license.created of an imported licence under an id derived from it (a resumed run publishes the same). */
  importedLicenseEvents(doc: Omit<LicenseDoc, 'outbox'>, product: Product): DomainEvent[];
  /** Keys a reroll took from a licence, whatever the account: they stay taken. */
  retiredKeys(keys: string[]): Promise<Map<string, RetiredKeyDoc>>;
  /** The licences holding any of these keys, whatever their account. */
  licensesByKeys(keys: string[]): Promise<Map<string, LicenseDoc>>;
  /** The fingerprints of the active machines of some licences, by licence id. */
  activeFingerprints(licenseIds: string[]): Promise<Map<string, string[]>>;
  /** An import's batch written (store/bulk-licenses.ts insertImported): the ids refused as existing. */
  insertImported: BulkLicenses['insertImported'];
  /** Takes back licences an import wrote that it must not keep, with their machines. */
  removeImported(ids: string[]): Promise<void>;
  /** A page of an account's licences (newest first) with their active machines: an export's. */
  exportPage: BulkLicenses['exportPage'];
  /**
   * Issues a licence batch's items under their fixed ids (one unordered insert, each licence with its
   * license.created, published now): the keys of the items' licences that exist after it, by licence id
   * (an earlier run's are found, never issued twice; one whose new key collided is absent).
   */
  issueBatchLicenses(batch: {
    account_id: string;
    product_id: string;
    policy: ReturnType<typeof withPolicyDefaults>;
    items: BatchLicenseItem[];
    now: Date;
  }): Promise<Map<string, string>>;
}

/**
 * What an erasure asks of the transfer module (src/transfer/), which owns the licence batches and the
 * export files: both may hold the e-mail. The module gives it (transfer/use-cases/erasure.ts).
 */
export interface TransferErasure {
  /** The e-mail replaced in the items of the account's licence batches; how many batches changed. */
  eraseFromBatches(accountId: string, email: string, placeholder: string): Promise<number>;
  /** Deletes the files of the account's finished exports (they may hold the e-mail). */
  deleteFinishedExports(accountId: string, now: Date): Promise<void>;
}

/** What the table is made of: the bulk reads and writes of licences, and the outbox publishing their events. */
export interface LicenseCoreDeps {
  bulk: Pick<
    BulkLicenses,
    | 'models'
    | 'retiredKeys'
    | 'licensesByKeys'
    | 'activeFingerprints'
    | 'insertImported'
    | 'removeImported'
    | 'exportPage'
    | 'insertLicenses'
    | 'keysOf'
  >;
  outbox: Pick<Outbox, 'flush'>;
}

/** The stored status an import row has (expired is derived from the expiry, as for every licence). */
const storedStatus = (row: ImportedLicenseInput) => (row.status === 'expired' ? 'active' : row.status);

export function importedPolicy(row: ImportedLicenseInput, product: Product): PolicySnapshot {
  const policy = storedPolicy(withPolicyDefaults(row.policy ?? product.policy));
  return row.max_activations === undefined ? policy : { ...policy, max_activations: row.max_activations };
}

function importedMachines(
  license: Pick<LicenseDoc, '_id' | 'account_id' | 'policy'>,
  row: ImportedLicenseInput,
  now: Date,
): ActivationDoc[] {
  const limited = license.policy.max_activations !== null;
  return row.activations.map((a, i) => {
    const id = newId('act', now.getTime());
    return {
      _id: id,
      license_id: license._id,
      account_id: license.account_id,
      fingerprint: a.fingerprint,
      name: a.name,
      slot_key: limited ? String(i + 1) : id,
      fingerprint_key: a.fingerprint,
      created_at: now,
      deactivated_at: null,
      last_seen_at: null,
      ...leaseOf(license, now),
    };
  });
}

/**
 * license.created of an imported licence, with its product's current entitlements, under an id derived
 * from the licence: a resumed run that announces it again publishes the same event (JetStream keeps one).
 */
const importedLicenseEvents = (doc: Omit<LicenseDoc, 'outbox'>, product: Product): DomainEvent[] => [
  licenseEvent(
    'license.created',
    withProductEntitlements(doc, withPolicyDefaults(product.policy).entitlements),
    doc.created_at,
    `evt_imported_${doc._id.slice(4)}`,
  ),
];

/** A licence as an import row makes it, with license.created (announced with the product's entitlements). */
export function importedLicense(
  imp: { _id: string; account_id: string },
  row: number,
  data: ImportedLicenseInput,
  product: Product,
  now: Date,
): ImportedLicense {
  const policy = importedPolicy(data, product);
  const graceEnds = graceEndsAt(data.expires_at, policy.grace_days);
  // A licence that had expired before it came here announces no license.expired.
  const lapsed = graceEnds !== null && graceEnds <= now;
  const doc = {
    _id: newId('lic', now.getTime()),
    account_id: imp.account_id,
    product_id: product.id,
    key: data.key,
    customer_email: data.customer_email,
    customer_email_lc: data.customer_email.toLowerCase(),
    status: storedStatus(data),
    expires_at: data.expires_at,
    grace_ends_at: graceEnds,
    policy,
    metadata: data.metadata,
    ...(data.entitlements.length ? { extra_entitlements: data.entitlements } : {}),
    expired_notified: lapsed,
    expiry_bucket: expiryBucket(graceEnds, lapsed, now),
    created_at: now,
    imported_from: { import_id: imp._id, row },
  };
  return { doc, activations: importedMachines(doc, data, now), events: importedLicenseEvents(doc, product) };
}

/** The table over the real stores (main.ts), or over fakes (unit tests). */
export function licenseCore({ bulk, outbox }: LicenseCoreDeps): LicenseCore {
  return {
    importedLicense,
    importedPolicy,
    importedMachines,
    importedLicenseEvents,
    retiredKeys: (keys) => bulk.retiredKeys(keys),
    licensesByKeys: (keys) => bulk.licensesByKeys(keys),
    activeFingerprints: (ids) => bulk.activeFingerprints(ids),
    insertImported: (...args) => bulk.insertImported(...args),
    removeImported: (ids) => bulk.removeImported(ids),
    exportPage: (...args) => bulk.exportPage(...args),
    async issueBatchLicenses({ account_id, product_id, policy, items, now }) {
      const rows = items.map((item) => {
        const licence: LicenseRecord = {
          ...newLicense(account_id, product_id, item.customer_email, storedPolicy(policy), now),
          _id: item.license_id,
          metadata: item.metadata ?? {},
          ...(item.entitlements?.length ? { extra_entitlements: [...item.entitlements] } : {}),
        };
        return { doc: licence, events: [licenseCreated(withProductEntitlements(licence, policy.entitlements))] };
      });
      const inserted = await bulk.insertLicenses(rows);
      const keys = await bulk.keysOf(rows.map((r) => r.doc._id));
      for (const row of rows) if (inserted.has(row.doc._id)) outbox.flush(bulk.models.License, row.doc._id, row.events);
      return keys;
    },
  };
}
