import { FIRST_SCHEMA_VERSION, SCHEMA_VERSION_FIELD, type Migration } from '@licensing/runtime';
import { ownerMember } from '../use-cases/members';

/**
 * Accounts made before members existed had one dashboard login, their owner's: each login without a
 * member gets its owner member (active). Idempotent: a login that has one is skipped. Reads every login
 * once (there is one per account), as a migration: before the service answers.
 */
export const ownerMembersMigration: Migration = {
  id: '0004-owner-members',
  description: 'every dashboard login made before members gets its owner member',
  async up(ctx) {
    const users = ctx.db.collection<{ _id: string; account_id: string; email: string; created_at: Date }>('users');
    const members = ctx.db.collection<{ _id: string; user_id: string | null }>('members');
    let made = 0;
    // In primary-key order: one pass over the logins by their _id index.
    const all = users.find({}, { projection: { _id: 1, account_id: 1, email: 1, created_at: 1 }, sort: { _id: 1 } });
    for await (const user of all) {
      if (await members.findOne({ user_id: user._id }, { projection: { _id: 1 } })) continue;
      await members.insertOne({ ...ownerMember(user), [SCHEMA_VERSION_FIELD]: FIRST_SCHEMA_VERSION } as never);
      made++;
      ctx.progress(made);
    }
    if (made) ctx.log.info({ members: made }, 'owner members made for the logins of older accounts');
  },
};
