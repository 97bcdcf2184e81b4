import { Schema, type Connection, type Model } from 'mongoose';
import type { PageRequest } from '@licensing/proto';
import { deleteBefore, listPage, withSchemaVersion } from '@licensing/runtime';
import type { AuditEntryFields, AuditFilter } from '../domain/audit';

/** One entry of an account's audit log (domain/audit.ts). Written once, never changed. */
export type AuditEventDoc = AuditEntryFields;

function auditSchema(): Schema<AuditEventDoc> {
  const schema = new Schema<AuditEventDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      at: { type: Date, required: true },
      actor: {
        type: { type: String, required: true },
        id: { type: String, required: true },
        name: String,
      },
      action: { type: String, required: true },
      target: { type: { type: String, required: true }, id: { type: String, default: '' } },
      request_id: String,
      ip: String,
      user_agent: String,
    },
    { versionKey: false, collection: 'audit_events' },
  );
  // Newest first per account, and by each filter (ids sort by time, so since/until are _id ranges).
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ account_id: 1, 'actor.id': 1, _id: -1 });
  schema.index({ account_id: 1, action: 1, _id: -1 });
  schema.index({ account_id: 1, 'target.id': 1, _id: -1 });
  // The retention job removes the oldest entries of every account: its cost follows what expires.
  schema.index({ at: 1 });
  return schema;
}

export const auditModel = (conn: Connection): Model<AuditEventDoc> =>
  conn.model<AuditEventDoc>('AuditEvent', auditSchema());

export class AuditStore {
  constructor(readonly AuditEvent: Model<AuditEventDoc>) {}

  /** Adds entries; one already there (its event delivered again) is left as it is. */
  async record(entries: AuditEventDoc[]): Promise<void> {
    if (!entries.length) return;
    try {
      await this.AuditEvent.insertMany(
        entries.map((d) => withSchemaVersion(this.AuditEvent, d)),
        { ordered: false, lean: true },
      );
    } catch (err) {
      const writeErrors = (err as { writeErrors?: { code?: number }[] }).writeErrors;
      if (!writeErrors?.length || !writeErrors.every((e) => e.code === 11000)) throw err;
    }
  }

  /** A page of an account's entries, newest first, within the filter. */
  list(accountId: string, filter: AuditFilter, page: PageRequest | undefined) {
    const below = [filter.idBefore, page?.starting_after].filter((x): x is string => !!x).sort()[0];
    const ids = {
      ...(below ? { $lt: below } : {}),
      ...(filter.idFrom ? { $gte: filter.idFrom } : {}),
    };
    return listPage<AuditEventDoc>(
      this.AuditEvent,
      {
        account_id: accountId,
        ...(filter.actor_id ? { 'actor.id': filter.actor_id } : {}),
        ...(filter.action ? { action: filter.action } : {}),
        ...(filter.target_id ? { 'target.id': filter.target_id } : {}),
        ...(Object.keys(ids).length ? { _id: ids } : {}),
      },
      { limit: page?.limit ?? 20, starting_after: '' },
    );
  }

  /** Removes up to `limit` entries of any account made before `bound`: how many went. */
  removeBefore(bound: Date, limit: number): Promise<number> {
    return deleteBefore(this.AuditEvent, 'at', bound, limit);
  }
}
