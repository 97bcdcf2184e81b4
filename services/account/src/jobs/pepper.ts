import { setWhereMissing, type Migration } from '@licensing/runtime';
import type { Connection } from 'mongoose';
import { LEGACY_PEPPER_ID } from '../domain/api-key';

// API_KEY_PEPPER's versions at rest (docs/operations.md, "Rotating secrets"): every key records the
// pepper its digest was made with, so an operator can see when no live key needs an old pepper.

/** Keys stored before peppers had versions were all digested with the single API_KEY_PEPPER. */
export const pepperIdMigration: Migration = {
  id: '0002-api-key-pepper-id',
  description: 'API keys stored without pepper_id get "legacy" (the single-value API_KEY_PEPPER)',
  async up(ctx) {
    await setWhereMissing(ctx, ['api_keys'], 'pepper_id', LEGACY_PEPPER_ID);
  },
};

/** Live keys per pepper version: an old pepper may be dropped once it has none. */
export async function pepperUsage(db: Connection): Promise<Record<string, number>> {
  const rows = await db
    .collection('api_keys')
    .aggregate<{ _id: string | null; n: number }>([
      { $match: { revoked_at: null } },
      { $group: { _id: '$pepper_id', n: { $sum: 1 } } },
    ])
    .toArray();
  const out: Record<string, number> = {};
  for (const r of rows) out[r._id ?? LEGACY_PEPPER_ID] = (out[r._id ?? LEGACY_PEPPER_ID] ?? 0) + r.n;
  return out;
}
