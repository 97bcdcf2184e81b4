import { listPage, outboxOf, postgresPagesOf, recordShape, withSchemaVersion } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { LicenseRecord } from '../domain/license';
import type { Model } from 'mongoose';
import type { ActivationDoc, LicenseDoc, LicenseModels } from './models';
import type { RetiredKeyDoc } from './retired-keys';

/** No query here runs longer than this on the server. */
const QUERY_MAX_MS = 5000;
/** Look-ups by key in flight at once over FerretDB. */
const LOOKUPS_AT_ONCE = 16;
/** Inserts of one batch in flight at once. */
const INSERTS_AT_ONCE = 4;

/**
 * The documents whose `field` is one of `values`: one $in on MongoDB; over FerretDB's PostgreSQL, which
 * passes only equalities down to SQL (an $in would read the whole collection), one equality per value on
 * its index, several at a time.
 */
async function whereIn<T>(
  model: LicenseModels['License'] | LicenseModels['Activation'] | LicenseModels['RetiredKey'],
  field: string,
  values: string[],
  rest: Record<string, unknown>,
  projection: Record<string, 0 | 1>,
): Promise<T[]> {
  if (!values.length) return [];
  const find = (filter: Record<string, unknown>) =>
    (model as unknown as Model<Record<string, unknown>>)
      .find({ ...filter, ...rest }, projection)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<T[]>()
      .exec();
  if (!postgresPagesOf(model.db)) return find({ [field]: { $in: values } });
  const out: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < values.length) out.push(...(await find({ [field]: values[next++] })));
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUPS_AT_ONCE, values.length) }, worker));
  return out;
}

/** The indexes of the documents an unordered insert refused as duplicates (anything else is thrown). */
function duplicatesOf(err: unknown): number[] | null {
  const e = err as { writeErrors?: unknown; code?: number };
  const list = Array.isArray(e?.writeErrors) ? e.writeErrors : e?.writeErrors ? [e.writeErrors] : null;
  if (!list) return null;
  const out: number[] = [];
  for (const w of list as { index?: number; code?: number; err?: { index?: number; code?: number } }[]) {
    const code = w.code ?? w.err?.code;
    const index = w.index ?? w.err?.index;
    if (code !== 11000 || typeof index !== 'number') return null;
    out.push(index);
  }
  return out;
}

/**
 * The licences and their machines read and written many at a time: an import's batches, a licence
 * batch's issuance, an export's pages. Only the licence core calls it (use-cases/license-core.ts, the
 * function table the transfer module is given): a licence is written in one place.
 */
export class BulkLicenses {
  constructor(readonly models: Pick<LicenseModels, 'License' | 'Activation' | 'RetiredKey'>) {}

  /**
   * The keys among these that a reroll took from a licence (retired_keys, whatever the account, in its
   * grace or after it): they stay taken, as a licence's key does.
   */
  async retiredKeys(keys: string[]): Promise<Map<string, RetiredKeyDoc>> {
    let wanted = [...new Set(keys)];
    // Over FerretDB's PostgreSQL, which of them exist is one statement on the `_id` index (a batch's
    // thousand look-ups through FerretDB cost a second); only those (seldom any) are then read.
    const pages = postgresPagesOf(this.models.RetiredKey.db);
    if (pages && wanted.length) wanted = await pages.idsAmong(this.models.RetiredKey.collection.collectionName, wanted);
    const docs = await whereIn<RetiredKeyDoc>(this.models.RetiredKey, '_id', wanted, {}, {});
    return new Map(docs.map((d) => [d._id, d]));
  }

  /** Takes back licences an import wrote that it must not keep (their key turned out retired), with their machines. */
  async removeImported(ids: string[]): Promise<void> {
    // One at a time by equality (a rare path): over FerretDB's PostgreSQL an $in would read every licence.
    for (const id of ids) {
      await this.models.Activation.deleteMany({ license_id: id });
      await this.models.License.deleteOne({ _id: id });
    }
  }

  /** The licences holding any of these keys, whatever their account (one read on the unique key index). */
  async licensesByKeys(keys: string[]): Promise<Map<string, LicenseDoc>> {
    const docs = await whereIn<LicenseDoc>(this.models.License, 'key', keys, {}, { outbox: 0 });
    return new Map(docs.map((d) => [d.key, d]));
  }

  /** The fingerprints of the active machines of some licences, by licence id. */
  async activeFingerprints(licenseIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (!licenseIds.length) return out;
    const docs = await whereIn<Pick<ActivationDoc, 'license_id' | 'fingerprint'>>(
      this.models.Activation,
      'license_id',
      licenseIds,
      { deactivated_at: null },
      { license_id: 1, fingerprint: 1 },
    );
    for (const d of docs) out.set(d.license_id, [...(out.get(d.license_id) ?? []), d.fingerprint]);
    return out;
  }

  /**
   * An import's batch: its licences in unordered inserts, then the machines of those that went in. The
   * ids of the licences refused because their key exists already (their events are stored apart).
   */
  async insertImported(
    licenses: { doc: Omit<LicenseDoc, 'outbox'> }[],
    activations: ActivationDoc[],
    /**
     * Run once the licences are in, before their machines: the ids of those to take back (their key
     * was retired by a reroll meanwhile), which are deleted and answered as refused.
     */
    recheck?: (inserted: Omit<LicenseDoc, 'outbox'>[]) => Promise<Set<string>>,
    /** Filled with the licences the store refused one by one (not an outage), each with why; absent: they throw. */
    refused?: Map<string, string>,
  ): Promise<Set<string>> {
    const failed = new Set<string>();
    // In a few unordered inserts side by side: FerretDB writes each document to PostgreSQL on its own,
    // and one insert keeps one connection (and one core) busy.
    const parts = Math.min(INSERTS_AT_ONCE, Math.ceil(licenses.length / 100));
    const size = Math.ceil(licenses.length / Math.max(parts, 1));
    await Promise.all(
      Array.from({ length: parts }, async (_, p) => {
        const part = licenses.slice(p * size, (p + 1) * size);
        try {
          // Lean (no mongoose document per licence), so stamped here as mongoose would (migrations.ts).
          await this.models.License.insertMany(
            part.map((l) => withSchemaVersion(this.models.License, l.doc)),
            { ordered: false, lean: true },
          );
        } catch (err) {
          const writeErrors = (
            err as { writeErrors?: { err?: { index?: number; code?: number }; index?: number; code?: number }[] }
          ).writeErrors;
          if (!writeErrors) throw err;
          for (const e of writeErrors) {
            const code = e.code ?? e.err?.code;
            const index = e.index ?? e.err?.index;
            if (index === undefined) throw err;
            if (code === 11000) failed.add(part[index].doc._id);
            // One document the store will not hold (not an outage: the others went in): that row's refusal.
            else if (refused) refused.set(part[index].doc._id, `the store cannot hold this row (error ${code})`);
            else throw err;
          }
        }
      }),
    );
    if (recheck) {
      const taken = await recheck(
        licenses.filter((l) => !failed.has(l.doc._id) && !refused?.has(l.doc._id)).map((l) => l.doc),
      );
      await this.removeImported([...taken]);
      for (const id of taken) failed.add(id);
    }
    const machines = activations.filter((a) => !failed.has(a.license_id) && !refused?.has(a.license_id));
    if (machines.length) {
      try {
        await this.models.Activation.insertMany(
          machines.map((m) => withSchemaVersion(this.models.Activation, m)),
          { ordered: false, lean: true },
        );
      } catch (err) {
        // A machine already there (a resumed batch): the unique (licence, fingerprint) index keeps one.
        const writeErrors = (err as { writeErrors?: { code?: number; err?: { code?: number } }[] }).writeErrors;
        if (!writeErrors || writeErrors.some((e) => (e.code ?? e.err?.code) !== 11000)) throw err;
      }
    }
    return failed;
  }

  /** A page of an account's licences, newest first after `after` (the export), with their active machines. */
  async exportPage(accountId: string, after: string, limit: number) {
    const page = await listPage<LicenseDoc>(
      this.models.License,
      { account_id: accountId },
      { limit, starting_after: after },
    );
    const docs = page.items;
    const machines = await whereIn<Pick<ActivationDoc, 'license_id' | 'fingerprint' | 'name'>>(
      this.models.Activation,
      'license_id',
      docs.map((d) => d._id),
      { deactivated_at: null },
      { license_id: 1, fingerprint: 1, name: 1 },
    );
    return { docs, machines, next: page.page.has_more ? page.page.next_cursor : '' };
  }

  /**
   * Inserts licences in one unordered write, each with its events. Answers the ids it inserted; a
   * licence whose id (an earlier run's) or key (a collision) exists already is left out, nothing else.
   */
  async insertLicenses(docs: { doc: LicenseRecord; events: DomainEvent[] }[]): Promise<Set<string>> {
    if (!docs.length) return new Set();
    const rows = docs.map(({ doc, events }) => ({ ...doc, ...outboxOf(events) }));
    try {
      await this.models.License.insertMany(rows, { ordered: false });
      return new Set(docs.map((d) => d.doc._id));
    } catch (err) {
      const refused = duplicatesOf(err);
      if (!refused) throw err;
      const out = new Set(docs.map((d) => d.doc._id));
      for (const i of refused) out.delete(docs[i].doc._id);
      return out;
    }
  }

  /**
   * The licences of these ids that exist, with their keys: one read by `_id` on MongoDB. Over FerretDB's
   * PostgreSQL, which does not pass an `$in` down to SQL (the read would decode every licence of every
   * account, each pass of a batch), one statement on FerretDB's `_id` index instead.
   */
  async keysOf(ids: string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const pages = postgresPagesOf(this.models.License.db);
    if (pages) {
      recordShape(this.models.License, 'find', { _id: { $in: ids } });
      const found = await pages.fieldAmong(this.models.License.collection.collectionName, ids, 'key');
      return new Map([...found].filter((e): e is [string, string] => typeof e[1] === 'string'));
    }
    const docs = await this.models.License.find({ _id: { $in: ids } }, { key: 1 })
      .lean<Pick<LicenseRecord, '_id' | 'key'>[]>()
      .exec();
    return new Map(docs.map((d) => [d._id, d.key]));
  }
}
