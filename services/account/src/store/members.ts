import { Schema, type Connection, type Model } from 'mongoose';
import {
  MEMBER_ROLES,
  MEMBER_STATUSES,
  type AccountActionEvent,
  type DomainEvent,
  type MemberRole,
  type MemberStatus,
  type PageRequest,
} from '@licensing/proto';
import { countMatching, listPage, outboxFields, outboxOf, withEvents } from '@licensing/runtime';

/** A person of an account with their role: invited (their link not yet used), active, or removed. */
export interface MemberDoc {
  /** mem_… */
  _id: string;
  account_id: string;
  /** Lower-cased; one member per address and account. */
  email: string;
  role: MemberRole;
  status: MemberStatus;
  /** The login (users) once the invitation is accepted; null while invited. */
  user_id: string | null;
  name: string;
  invited_by: string;
  created_at: Date;
  /** SHA-256 of the invitation link's token, until it is used; null after. */
  invite_digest: string | null;
  invite_expires_at: Date | null;
  /** The account's own actions about this member (invited, role changed, removed), for the audit log. */
  outbox?: Record<string, DomainEvent>;
}

function memberSchema(): Schema<MemberDoc> {
  const schema = new Schema<MemberDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      email: { type: String, required: true },
      role: { type: String, required: true, enum: MEMBER_ROLES },
      status: { type: String, required: true, enum: MEMBER_STATUSES },
      user_id: { type: String, default: null },
      name: { type: String, default: '' },
      invited_by: { type: String, required: true },
      created_at: { type: Date, required: true },
      invite_digest: { type: String, default: null },
      invite_expires_at: { type: Date, default: null },
      ...outboxFields,
    },
    { versionKey: false, collection: 'members' },
  );
  schema.index({ account_id: 1, email: 1 }, { unique: true });
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ user_id: 1 });
  schema.index({ invite_digest: 1 });
  return schema;
}

export const memberModel = (conn: Connection): Model<MemberDoc> => conn.model<MemberDoc>('Member', memberSchema());

const action = (e: AccountActionEvent) => e as unknown as DomainEvent;

export class MemberStore {
  constructor(readonly Member: Model<MemberDoc>) {}

  /** A new member with the action that records it; false when the address is already one of the account's. */
  async insert(doc: Omit<MemberDoc, 'outbox'>, event: AccountActionEvent): Promise<boolean> {
    try {
      await this.Member.create({ ...doc, ...outboxOf([action(event)]) });
      return true;
    } catch (err) {
      if ((err as { code?: number })?.code === 11000) return false;
      throw err;
    }
  }

  byId(accountId: string, id: string): Promise<MemberDoc | null> {
    return this.Member.findOne({ _id: id, account_id: accountId }, { outbox: 0 }).lean<MemberDoc>().exec();
  }

  byEmail(accountId: string, email: string): Promise<MemberDoc | null> {
    return this.Member.findOne({ account_id: accountId, email }, { outbox: 0 }).lean<MemberDoc>().exec();
  }

  byUser(userId: string): Promise<MemberDoc | null> {
    return this.Member.findOne({ user_id: userId }, { outbox: 0 }).lean<MemberDoc>().exec();
  }

  byInvitation(digest: string): Promise<MemberDoc | null> {
    return this.Member.findOne({ invite_digest: digest }, { outbox: 0 }).lean<MemberDoc>().exec();
  }

  /** The account's owner (one per account; none for an account made by the operator CLI). */
  ownerOf(accountId: string): Promise<MemberDoc | null> {
    return this.Member.findOne({ account_id: accountId, role: 'owner', status: 'active' }, { outbox: 0 })
      .lean<MemberDoc>()
      .exec();
  }

  /** How many members the account has, invited or active (its cap's count). */
  countLive(accountId: string): Promise<number> {
    return countMatching(this.Member, { account_id: accountId, status: { $in: ['invited', 'active'] } });
  }

  /** The account's members but removed ones, newest first, a page at a time. */
  list(accountId: string, page: PageRequest | undefined) {
    return listPage<MemberDoc>(this.Member, { account_id: accountId, status: { $in: ['invited', 'active'] } }, page);
  }

  /**
   * Changes a member if it is still as `expected` says (its status and role: a concurrent change wins
   * once), with the action that records it. The member after, or null when it changed meanwhile.
   */
  async change(
    current: MemberDoc,
    changes: Partial<Omit<MemberDoc, '_id' | 'account_id' | 'outbox'>>,
    event: AccountActionEvent,
  ): Promise<MemberDoc | null> {
    const res = await this.Member.updateOne(
      { _id: current._id, status: current.status, role: current.role },
      { $set: { ...changes, ...withEvents([action(event)]) } },
    );
    return res.modifiedCount ? { ...current, ...changes } : null;
  }
}
