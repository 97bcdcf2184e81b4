import type { Keyring } from '@licensing/runtime';
import type { Model } from 'mongoose';
import type { EndpointDoc } from '../store/models';

// The re-seal job of WEBHOOK_SECRET_KEY (docs/operations.md, "Rotating secrets"): every endpoint's
// sealed signing secrets are moved to the keyring's current key. Idempotent (an endpoint whose
// secrets are all under the current key is left alone). The write replaces only `secrets`, and only
// while they are still the ones read (a secret rotated meanwhile makes it skip the endpoint, which
// the next run picks up): on MongoDB that condition is atomic; FerretDB applies updates without
// isolation, so there an endpoint edited in the same instant may need the job run again.

export interface ResealReport {
  scanned: number;
  resealed: number;
  /** Endpoints with a secret under a key the ring does not hold: configure that key and run again. */
  unreadable: string[];
  /** Endpoints changed while being re-sealed: run the job again for them. */
  changed_meanwhile: number;
}

const PAGE = 200;

export async function resealEndpointSecrets(
  Endpoint: Model<EndpointDoc>,
  keyring: Keyring,
  progress: (line: Record<string, unknown>) => void,
): Promise<ResealReport> {
  const report: ResealReport = { scanned: 0, resealed: 0, unreadable: [], changed_meanwhile: 0 };
  let after = '';
  for (;;) {
    const page = await Endpoint.find(after ? { _id: { $gt: after } } : {}, { _id: 1, secrets: 1 })
      .sort({ _id: 1 })
      .limit(PAGE)
      .lean<Pick<EndpointDoc, '_id' | 'secrets'>[]>()
      .exec();
    if (!page.length) break;
    for (const doc of page) {
      report.scanned++;
      if (doc.secrets.every((s) => keyring.isCurrent(s.sealed))) continue;
      let secrets: EndpointDoc['secrets'];
      try {
        secrets = doc.secrets.map((s) => ({ ...s, sealed: keyring.reseal(s.sealed) }));
      } catch {
        report.unreadable.push(doc._id);
        continue;
      }
      const r = await Endpoint.updateOne(
        { _id: doc._id, 'secrets.sealed': { $all: doc.secrets.map((s) => s.sealed) } },
        { $set: { secrets } },
      );
      if (r.modifiedCount) report.resealed++;
      else report.changed_meanwhile++;
    }
    after = page[page.length - 1]._id;
    progress({ collection: 'webhook_endpoints', scanned: report.scanned, resealed: report.resealed });
  }
  return report;
}
