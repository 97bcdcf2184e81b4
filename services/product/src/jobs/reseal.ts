import type { Keyring } from '@licensing/runtime';
import type { Model } from 'mongoose';
import type { SigningKeyDoc } from '../store/signing-keys';

// The re-seal job of SIGNING_KEY_SECRET (docs/operations.md, "Rotating secrets"): every signing
// key's sealed private key is moved to the keyring's current key. Idempotent (a value already under
// the current key is left alone) and safe while the service serves: a signing key is never changed
// after it is written except here, and the write is conditional on the value it replaces.

export interface ResealReport {
  scanned: number;
  resealed: number;
  /** Values under a key the ring does not hold (kids, never secrets): configure that key and run again. */
  unreadable: string[];
}

const PAGE = 200;

export async function resealSigningKeys(
  SigningKey: Model<SigningKeyDoc>,
  keyring: Keyring,
  progress: (line: Record<string, unknown>) => void,
): Promise<ResealReport> {
  const report: ResealReport = { scanned: 0, resealed: 0, unreadable: [] };
  let after = '';
  for (;;) {
    const page = await SigningKey.find(after ? { _id: { $gt: after } } : {})
      .sort({ _id: 1 })
      .limit(PAGE)
      .lean<SigningKeyDoc[]>()
      .exec();
    if (!page.length) break;
    for (const doc of page) {
      report.scanned++;
      if (keyring.isCurrent(doc.private_key_sealed)) continue;
      let next: string;
      try {
        next = keyring.reseal(doc.private_key_sealed);
      } catch {
        report.unreadable.push(doc._id);
        continue;
      }
      const r = await SigningKey.updateOne(
        { _id: doc._id, private_key_sealed: doc.private_key_sealed },
        { $set: { private_key_sealed: next } },
      );
      report.resealed += r.modifiedCount;
    }
    after = page[page.length - 1]._id;
    progress({ collection: 'signing_keys', scanned: report.scanned, resealed: report.resealed });
  }
  return report;
}
