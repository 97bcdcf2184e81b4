import type { DomainEvent, Product } from '@licensing/proto';
import type { ActivationDoc, ImportedLicense, LicenseCore, LicenseDoc } from '../../use-cases/license-core';
import { firstDifference, policyKey, type ComparableLicense, type ImportRow } from '../domain/import-rows';
import type { ImportTally } from './import-tally';

// One batch of an import's licence rows, written: keys met earlier in the file are settled first; the
// others are inserted at once, in one unordered insert through the licence core: a key stored anywhere
// already is refused by the unique index, and only those are read (one look-up per batch for the keys
// that exist), which a first import of a file seldom has.

/** A licence row whose product is known. */
export interface LicenseRow {
  row: number;
  data: ImportRow;
  product: Product;
}

/** A row to insert: the licence it makes, and its form to compare with what is stored. */
interface Candidate extends LicenseRow, ImportedLicense {
  form: ComparableLicense;
}

/** What one batch's licences need: the core, the import, the run's tally and the keys it met. */
export interface LicenseBatchWriter {
  core: LicenseCore;
  imp: { _id: string; account_id: string };
  tally: ImportTally;
  /** Keys met in this run, with the row and form they had (a key twice in one file). */
  seen: Map<string, { row: number; form: ComparableLicense }>;
}

/** The form a row compares by: what it would store. */
function comparable(core: LicenseCore, row: ImportRow, product: Product): ComparableLicense {
  const policy = core.importedPolicy(row, product);
  return {
    product_id: product.id,
    customer_email: row.customer_email,
    status: row.status === 'expired' ? 'active' : row.status,
    expires_at: row.expires_at,
    max_activations: policy.max_activations,
    metadata: row.metadata,
    entitlements: row.entitlements,
    fingerprints: row.activations.map((a) => a.fingerprint),
    ...(row.policy ? { policy: policyKey(policy) } : {}),
  };
}

/** The form a stored licence compares by. */
function storedForm(doc: LicenseDoc, fingerprints: string[]): ComparableLicense {
  return {
    product_id: doc.product_id,
    customer_email: doc.customer_email,
    status: doc.status,
    expires_at: doc.expires_at,
    max_activations: doc.policy.max_activations,
    metadata: doc.metadata ?? {},
    entitlements: doc.extra_entitlements ?? [],
    fingerprints,
    policy: policyKey(doc.policy),
  };
}

/**
 * The batch's licence rows written; the license.created events of those imported (new, or written by
 * this import before a crash), to be published.
 */
export async function writeLicenseRows(w: LicenseBatchWriter, licenses: LicenseRow[], now: Date) {
  const candidates = newCandidates(w, licenses, now);
  const { existing, events } = await insertCandidates(w, candidates);
  if (existing.length) events.push(...(await settleExisting(w, existing, now)));
  return events;
}

/** The rows whose key is new to this run, as licences; a key met earlier in the file is settled here. */
function newCandidates(w: LicenseBatchWriter, licenses: LicenseRow[], now: Date): Candidate[] {
  const out: Candidate[] = [];
  for (const l of licenses) {
    const form = comparable(w.core, l.data, l.product);
    const earlier = w.seen.get(l.data.key);
    if (earlier) {
      const diff = firstDifference(earlier.form, form);
      if (diff) w.tally.reject(l.row, `key appears earlier in the file (row ${earlier.row}) with another ${diff}`);
      else w.tally.skipped();
      continue;
    }
    w.seen.set(l.data.key, { row: l.row, form });
    out.push({ ...l, form, ...w.core.importedLicense(w.imp, l.row, l.data, l.product, now) });
  }
  return out;
}

/**
 * Inserts the candidates. A key a reroll took from a licence stays taken (retired_keys), in its grace
 * and after it: else the importer's licence would answer for a key another licence's holder still has.
 * Read before the insert (rows holding one are settled with the existing ones, never written), and
 * again once the licences are in: a reroll that retired one of these keys meanwhile had claimed it
 * before it freed the key index, so the second read finds every claim the first missed, and that
 * licence is taken back at once.
 */
async function insertCandidates(w: LicenseBatchWriter, candidates: Candidate[]) {
  const { core, tally } = w;
  const retiredBefore = await core.retiredKeys(candidates.map((t) => t.data.key));
  const writable = candidates.filter((t) => !retiredBefore.has(t.data.key));
  const refused = new Map<string, string>();
  const failed = await core.insertImported(
    writable.map((t) => ({ doc: t.doc })),
    writable.flatMap((t) => t.activations),
    async (inserted) => {
      const retired = await core.retiredKeys(inserted.map((d) => d.key));
      return new Set(inserted.filter((d) => retired.has(d.key)).map((d) => d._id));
    },
    refused,
  );
  for (const t of candidates) if (retiredBefore.has(t.data.key)) failed.add(t.doc._id);
  const events: DomainEvent[] = [];
  for (const t of candidates) {
    const why = refused.get(t.doc._id);
    if (why) {
      tally.reject(t.row, why);
      continue;
    }
    if (failed.has(t.doc._id)) continue;
    tally.imported();
    events.push(...t.events);
  }
  return { existing: candidates.filter((t) => failed.has(t.doc._id)), events };
}

/**
 * The rows whose key is stored already (or retired): each is this import's own (written before a crash,
 * after its last checkpoint), the same licence (skipped), another of the account's (rejected, naming the
 * first difference), or a key taken elsewhere (refused, with nothing about where).
 */
async function settleExisting(w: LicenseBatchWriter, existing: Candidate[], now: Date): Promise<DomainEvent[]> {
  const { core, imp, tally } = w;
  const keys = existing.map((t) => t.data.key);
  const [stored, retired] = await Promise.all([core.licensesByKeys(keys), core.retiredKeys(keys)]);
  // A retired key held by a licence this import wrote (before a crash, after its last checkpoint,
  // and before the second read could take it back): taken back now.
  const misplaced = [...stored.values()].filter((d) => {
    const claim = retired.get(d.key);
    return claim && claim.license_id !== d._id && d.imported_from?.import_id === imp._id;
  });
  await core.removeImported(misplaced.map((d) => d._id));
  for (const d of misplaced) stored.delete(d.key);
  const ours = [...stored.values()].filter((d) => d.account_id === imp.account_id);
  const fingerprints = await core.activeFingerprints(ours.map((d) => d._id));
  const missingMachines: ActivationDoc[] = [];
  const events: DomainEvent[] = [];
  for (const t of existing) {
    const found = stored.get(t.data.key);
    const claim = retired.get(t.data.key);
    if (claim && claim.license_id !== found?._id) {
      // Taken by a reroll (the licence it was taken from has another key now): as any taken key, with
      // nothing about where; in this account, what happened to it.
      if (claim.account_id === imp.account_id)
        tally.reject(t.row, 'key was replaced by a reroll in this account: a replaced key is never given out again');
      else tally.refuseKey(t.row);
      continue;
    }
    if (!found || found.account_id !== imp.account_id) {
      // Nothing about where: another account's key is simply refused (or it went away meanwhile: retry the file).
      tally.refuseKey(t.row);
      continue;
    }
    const from = found.imported_from;
    if (from?.import_id === imp._id && from.row === t.row) {
      // Written by this import before a crash, after its last checkpoint: imported, its machines made whole.
      const have = new Set(fingerprints.get(found._id) ?? []);
      for (const a of core.importedMachines(found, t.data, now)) if (!have.has(a.fingerprint)) missingMachines.push(a);
      tally.imported();
      // Its events again, under the same ids (their group may not have been stored before the crash).
      events.push(...core.importedLicenseEvents(found, t.product));
      continue;
    }
    const diff = firstDifference(storedForm(found, fingerprints.get(found._id) ?? []), t.form);
    if (diff) tally.reject(t.row, `key is already in this account with another ${diff}`);
    else tally.skipped();
  }
  if (missingMachines.length) await core.insertImported([], missingMachines);
  return events;
}
