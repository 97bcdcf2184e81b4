import { Schema, type Connection, type Model } from 'mongoose';
import type { LicenseDoc } from './models';

/**
 * A key a reroll took from a licence (`_id`: the old key, canonical). Inserted before the licence gets
 * its new key, so the unique `_id` is the claim: of two rerolls of one key, one inserts it and the
 * other finishes that one's reroll with the same new key (never a second one). Read by `_id` when a
 * key is not found on a licence: the old key validates until `until`, and is not found after.
 */
export interface RetiredKeyDoc {
  _id: string;
  account_id: string;
  license_id: string;
  /** The key the reroll gives the licence. */
  new_key: string;
  until: Date;
  created_at: Date;
}

export function rerollModels(conn: Connection) {
  const schema = new Schema<RetiredKeyDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      license_id: { type: String, required: true },
      new_key: { type: String, required: true },
      until: { type: Date, required: true },
      created_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'retired_keys' },
  );
  return { RetiredKey: conn.model<RetiredKeyDoc>('RetiredKey', schema) as Model<RetiredKeyDoc> };
}

type Models = ReturnType<typeof rerollModels>;

/** The queries of rerolls: one unique insert to claim a key, reads by `_id`. */
export class RetiredKeyStore {
  constructor(private readonly models: Models) {}

  /** Claims `doc._id` for this reroll: false when another reroll of that key claimed it first. */
  async claim(doc: RetiredKeyDoc): Promise<boolean> {
    try {
      await this.models.RetiredKey.create(doc);
      return true;
    } catch (err) {
      if ((err as { code?: number })?.code === 11000) return false;
      throw err;
    }
  }

  find(key: string): Promise<RetiredKeyDoc | null> {
    return this.models.RetiredKey.findOne({ _id: key }).lean<RetiredKeyDoc>().exec();
  }

  /** A claim left by a reroll that did not finish gets this request's grace (its new key stays). */
  async extend(key: string, until: Date): Promise<void> {
    await this.models.RetiredKey.updateOne({ _id: key }, { $set: { until } });
  }

  /** Gives up a claim whose new key another licence holds (a collision), so a retry makes another. */
  async release(key: string, newKey: string): Promise<void> {
    await this.models.RetiredKey.deleteOne({ _id: key, new_key: newKey });
  }
}

/** What looking a retired key up needs: its claim, and the licence by id. */
export interface RetiredKeyReads {
  retired?: { find(key: string): Promise<Pick<RetiredKeyDoc, 'account_id' | 'license_id' | 'until'> | null> };
  store: { findIdInAccount?(accountId: string, id: string): Promise<LicenseDoc | null> };
}

/**
 * The licence a reroll took `key` (canonical) from, and when the key stops validating; undefined when no
 * reroll took it, or its reroll has not finished (the licence still has the key: the key index finds it).
 * `validAt`: only a key still in its grace at that moment (the licence is not read otherwise).
 */
export async function rerolledFrom(
  { retired, store }: RetiredKeyReads,
  key: string,
  validAt?: Date,
): Promise<{ doc: LicenseDoc; until: Date } | undefined> {
  const claim = retired && (await retired.find(key));
  if (!claim || !store.findIdInAccount) return undefined;
  if (validAt && claim.until.getTime() <= validAt.getTime()) return undefined;
  const doc = await store.findIdInAccount(claim.account_id, claim.license_id);
  return doc && doc.key !== key ? { doc, until: claim.until } : undefined;
}
