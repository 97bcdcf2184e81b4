import type { Migration } from '@licensing/runtime';
import type { Connection } from 'mongoose';

/**
 * Keys stored before slots existed get a slot_key: "legacy:<id>" when live (the cap's count still sees
 * them), "freed:<id>" when revoked. How many changed. Finding keys without one reads every key on
 * FerretDB (it passes no `null` equality down to PostgreSQL), so it runs once per database, as a
 * migration: migrations run before startService builds the indexes, as the unique (slot_key,
 * account_id) index needs (keys without one would break it).
 */
export async function backfillKeySlots(db: Connection): Promise<number> {
  const keys = db.collection<{ _id: string; slot_key?: string | null; revoked_at?: Date | null }>('api_keys');
  const cursor = keys.find({ slot_key: null }, { projection: { _id: 1, revoked_at: 1 } });
  let filled = 0;
  for await (const key of cursor) {
    const slot = key.revoked_at ? `freed:${key._id}` : `legacy:${key._id}`;
    await keys.updateOne({ _id: key._id, slot_key: null }, { $set: { slot_key: slot } });
    filled++;
  }
  return filled;
}

export const keySlotsMigration: Migration = {
  id: '0003-api-key-slots',
  description: 'API keys stored without slot_key get "legacy:<id>" (live) or "freed:<id>" (revoked)',
  async up(ctx) {
    const filled = await backfillKeySlots(ctx.db);
    ctx.progress(filled);
    if (filled) ctx.log.info({ keys: filled }, 'API keys given a slot_key');
  },
};
