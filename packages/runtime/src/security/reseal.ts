import type { Model } from 'mongoose';
import type { Keyring } from './sealed';

// The re-seal job of a keyring setting (docs/operations.md, "Rotating secrets"): every document's one
// sealed value is moved to the ring's current key, a page at a time by _id. Idempotent (a value already
// under the current key is left alone) and safe while the service serves: the write is conditional on
// the value it replaces, so a value changed meanwhile is left to its writer.

export interface ResealReport {
  scanned: number;
  resealed: number;
  /** Values under a key the ring does not hold (ids, never secrets): configure that key and run again. */
  unreadable: string[];
}

const PAGE = 200;

export async function resealField<D extends { _id: string }>(opts: {
  model: Model<D>;
  /** Where the sealed value is (`private_key_sealed`, `mfa.secret`); documents without one are skipped. */
  path: string;
  keyring: Keyring;
  progress: (line: Record<string, unknown>) => void;
}): Promise<ResealReport> {
  const { model, path, keyring } = opts;
  const report: ResealReport = { scanned: 0, resealed: 0, unreadable: [] };
  const sealedIn = (doc: D) => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], doc);
  let after = '';
  for (;;) {
    const page = await model
      // By _id alone (an index every collection has): documents without a value are skipped here.
      .find((after ? { _id: { $gt: after } } : {}) as never, { [path]: 1 })
      .sort({ _id: 1 })
      .limit(PAGE)
      .lean<D[]>()
      .exec();
    if (!page.length) break;
    for (const doc of page) {
      const sealed = sealedIn(doc);
      if (typeof sealed !== 'string') continue;
      report.scanned++;
      if (keyring.isCurrent(sealed)) continue;
      let next: string;
      try {
        next = keyring.reseal(sealed);
      } catch {
        report.unreadable.push(doc._id);
        continue;
      }
      const r = await model.updateOne({ _id: doc._id, [path]: sealed } as never, { $set: { [path]: next } } as never);
      report.resealed += r.modifiedCount;
    }
    after = page[page.length - 1]._id;
    opts.progress({ collection: model.collection.name, scanned: report.scanned, resealed: report.resealed });
  }
  return report;
}
