import { outboxOf } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { ActivationDoc, LicenseDoc, LicenseModels } from './models';

/** No query here runs longer than this on the server. */
const QUERY_MAX_MS = 5000;

/** What imports and exports read and write of the licences and their machines, in batches. */
export class ImportedLicenses {
  constructor(readonly models: Pick<LicenseModels, 'License' | 'Activation'>) {}

  /** The licences holding any of these keys, whatever their account (one read on the unique key index). */
  async licensesByKeys(keys: string[]): Promise<Map<string, LicenseDoc>> {
    if (!keys.length) return new Map();
    const docs = await this.models.License.find({ key: { $in: keys } }, { outbox: 0 })
      .maxTimeMS(QUERY_MAX_MS)
      .lean<LicenseDoc[]>()
      .exec();
    return new Map(docs.map((d) => [d.key, d]));
  }

  /** The fingerprints of the active machines of some licences, by licence id. */
  async activeFingerprints(licenseIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (!licenseIds.length) return out;
    const docs = await this.models.Activation.find(
      { license_id: { $in: licenseIds }, deactivated_at: null },
      { license_id: 1, fingerprint: 1 },
    )
      .maxTimeMS(QUERY_MAX_MS)
      .lean<Pick<ActivationDoc, 'license_id' | 'fingerprint'>[]>()
      .exec();
    for (const d of docs) out.set(d.license_id, [...(out.get(d.license_id) ?? []), d.fingerprint]);
    return out;
  }

  /**
   * An import's batch: its licences (each with its events) in one unordered insert, then the machines of
   * those that went in. The ids of the licences refused because their key was taken meanwhile.
   */
  async insertImported(
    licenses: { doc: Omit<LicenseDoc, 'outbox'>; events: DomainEvent[] }[],
    activations: ActivationDoc[],
  ): Promise<Set<string>> {
    const failed = new Set<string>();
    if (licenses.length) {
      try {
        await this.models.License.insertMany(
          licenses.map((l) => ({ ...l.doc, ...outboxOf(l.events) })),
          { ordered: false, lean: true },
        );
      } catch (err) {
        const writeErrors = (err as { writeErrors?: { err?: { index?: number; code?: number }; index?: number; code?: number }[] })
          .writeErrors;
        if (!writeErrors) throw err;
        for (const e of writeErrors) {
          const code = e.code ?? e.err?.code;
          const index = e.index ?? e.err?.index;
          if (code !== 11000 || index === undefined) throw err;
          failed.add(licenses[index].doc._id);
        }
      }
    }
    const machines = activations.filter((a) => !failed.has(a.license_id));
    if (machines.length) {
      try {
        await this.models.Activation.insertMany(machines, { ordered: false, lean: true });
      } catch (err) {
        // A machine already there (a resumed batch): the unique (licence, fingerprint) index keeps one.
        const writeErrors = (err as { writeErrors?: { code?: number; err?: { code?: number } }[] }).writeErrors;
        if (!writeErrors || writeErrors.some((e) => (e.code ?? e.err?.code) !== 11000)) throw err;
      }
    }
    return failed;
  }

  /** A page of an account's licences, oldest first after `after` (the export), with their active machines. */
  async exportPage(accountId: string, after: string, limit: number) {
    const filter = after ? { account_id: accountId, _id: { $gt: after } } : { account_id: accountId };
    const docs = await this.models.License.find(filter, { outbox: 0 })
      .sort({ account_id: 1, _id: 1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<LicenseDoc[]>()
      .exec();
    const machines = await this.models.Activation.find(
      { license_id: { $in: docs.map((d) => d._id) }, deactivated_at: null },
      { license_id: 1, fingerprint: 1, name: 1 },
    )
      .maxTimeMS(QUERY_MAX_MS)
      .lean<Pick<ActivationDoc, 'license_id' | 'fingerprint' | 'name'>[]>()
      .exec();
    return { docs, machines };
  }

}
