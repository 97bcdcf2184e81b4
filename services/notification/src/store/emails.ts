import { Schema, type Connection, type Model } from 'mongoose';
import { listPage } from '@licensing/runtime';
import {
  emailStatuses,
  emailTemplates,
  type EmailStatus,
  type EmailTemplate,
  type PageRequest,
} from '@licensing/proto';

export interface EmailDoc {
  /** eml_…, time-ordered: the log pages newest first. */
  _id: string;
  /**
   * The id of the event that asked for it: one mail per event, however often the event
   * arrives (a unique index). "api:<_id>" for mail asked through the API.
   */
  request_key: string;
  account_id: string;
  template: EmailTemplate;
  to: string;
  license_key: string;
  /** Filled in when the mail is rendered (at its first attempt). */
  subject: string;
  status: EmailStatus;
  attempts: number;
  /**
   * When the sender may take it next (queued only). A sender that takes it sets this a claim
   * period ahead first, so another instance leaves it alone; if that sender dies mid-send the
   * mail is due again when the claim runs out, and may go out once more.
   */
  next_attempt_at: Date | null;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

/**
 * A mail waiting for its first attempt (due now). `to` is stored lower-cased, so the erasure of a
 * customer finds their mail through an index, whatever case they typed.
 */
export function queuedMail(
  template: EmailTemplate,
  f: Pick<EmailDoc, '_id' | 'request_key' | 'account_id' | 'to' | 'license_key'>,
  now: Date,
): EmailDoc {
  return {
    ...f,
    to: f.to.trim().toLowerCase(),
    template,
    subject: '',
    status: 'queued',
    attempts: 0,
    next_attempt_at: now,
    last_error: null,
    created_at: now,
    sent_at: null,
  };
}

/** A purchase e-mail waiting for its first attempt, as both the consumer and the API queue one. */
export const queuedPurchaseMail = (
  f: Pick<EmailDoc, '_id' | 'request_key' | 'account_id' | 'to' | 'license_key'>,
  now: Date,
): EmailDoc => queuedMail('purchase', f, now);

export function emailModel(conn: Connection): Model<EmailDoc> {
  const schema = new Schema<EmailDoc>(
    {
      _id: String,
      request_key: { type: String, required: true },
      account_id: { type: String, required: true },
      template: { type: String, required: true, enum: emailTemplates },
      to: { type: String, required: true },
      // '' for a sign-in request (no licence).
      license_key: { type: String, default: '' },
      subject: { type: String, default: '' },
      status: { type: String, required: true, enum: emailStatuses },
      attempts: { type: Number, default: 0 },
      next_attempt_at: { type: Date, default: null },
      last_error: { type: String, default: null },
      created_at: { type: Date, required: true },
      sent_at: { type: Date, default: null },
    },
    { versionKey: false, collection: 'emails' },
  );
  // The sender's due query, and the mail log of an account newest first.
  schema.index({ status: 1, next_attempt_at: 1 });
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ request_key: 1 }, { unique: true });
  // A licence's last seat rescue (one per hour), and the erasure of a customer's address.
  schema.index({ account_id: 1, license_key: 1, template: 1, created_at: -1 });
  schema.index({ account_id: 1, to: 1 });
  return conn.model<EmailDoc>('Email', schema);
}

/** No query of the sender runs longer than this on the server. */
const QUERY_MAX_MS = 5000;

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class EmailStore {
  /** Told of each mail this instance queues (the sender sends it at once rather than at its next look). */
  onQueued?: () => void;

  constructor(readonly Email: Model<EmailDoc>) {}

  /** Queues a mail once: false if one for this request_key is already there (a redelivered event). */
  async record(doc: EmailDoc): Promise<boolean> {
    try {
      await this.Email.create(doc);
      this.onQueued?.();
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  /** Queued mail that is due, oldest first. */
  due(now: Date, limit: number): Promise<EmailDoc[]> {
    return this.Email.find({ status: 'queued', next_attempt_at: { $lte: now } })
      .sort({ next_attempt_at: 1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<EmailDoc[]>()
      .exec();
  }

  /** Takes a due mail for one attempt, until `until`; false if another sender took it first. */
  async claim(id: string, now: Date, until: Date): Promise<boolean> {
    const res = await this.Email.updateOne(
      { _id: id, status: 'queued', next_attempt_at: { $lte: now } },
      { $set: { next_attempt_at: until } },
    );
    return res.modifiedCount === 1;
  }

  async update(id: string, changes: Partial<EmailDoc>): Promise<void> {
    await this.Email.updateOne({ _id: id }, { $set: changes });
  }

  /** A mail that will not be sent after all, gone from the log (a sign-in asked for an address holding no licence). */
  async remove(id: string): Promise<void> {
    await this.Email.deleteOne({ _id: id });
  }

  /** The newest mail of a template for a licence created after `since`. */
  latestFor(accountId: string, key: string, template: EmailTemplate, since: Date): Promise<EmailDoc | null> {
    return this.Email.findOne({ account_id: accountId, license_key: key, template, created_at: { $gt: since } })
      .sort({ created_at: -1 })
      .lean<EmailDoc>()
      .exec();
  }

  /**
   * A customer erased: their address in the account's log becomes the placeholder. Sign-in requests
   * not sent yet are dropped, and other mail not sent yet fails (there is nobody to send it to).
   * How many mails changed.
   */
  async eraseCustomer(accountId: string, email: string, placeholder: string): Promise<number> {
    const mine = { account_id: accountId, to: email };
    const dropped = await this.Email.deleteMany({ ...mine, template: 'portal_link', status: 'queued' });
    const stopped = await this.Email.updateMany(
      { ...mine, status: 'queued' },
      { $set: { to: placeholder, status: 'failed', next_attempt_at: null, last_error: 'the customer was erased' } },
    );
    const renamed = await this.Email.updateMany(mine, { $set: { to: placeholder } });
    return dropped.deletedCount + stopped.modifiedCount + renamed.modifiedCount;
  }

  byRequestKey(accountId: string, requestKey: string): Promise<EmailDoc | null> {
    return this.Email.findOne({ request_key: requestKey, account_id: accountId }).lean<EmailDoc>().exec();
  }

  find(accountId: string, id: string): Promise<EmailDoc | null> {
    return this.Email.findOne({ _id: id, account_id: accountId }).lean<EmailDoc>().exec();
  }

  /**
   * The mail log of an account. A sign-in request not yet tried is left out: the sender has not yet
   * decided whether the address holds licences (a stranger's is dropped unlogged), and the vendor must
   * not learn who asked (issue 28: the portal never reveals whether an e-mail is a customer).
   */
  list(accountId: string, page: PageRequest | undefined) {
    return listPage<EmailDoc>(
      this.Email,
      {
        account_id: accountId,
        $or: [{ template: { $ne: 'portal_link' } }, { attempts: { $gt: 0 } }, { status: { $ne: 'queued' } }],
      },
      page,
    );
  }
}
