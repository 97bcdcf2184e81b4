import { Schema, type Connection, type Model } from 'mongoose';
import { listPage } from '@licensing/runtime';
import type { MailAdmission } from '../use-cases/mail-admission';
import type { EmailClaimStore } from './email-claims';
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
   * When the sender may take it next (queued), or when its account's mail quota may allow it
   * (deferred: the end of the window that refused it). A sender that takes a queued mail sets this a
   * claim period ahead, so another instance leaves it alone; if that sender dies mid-send the mail is
   * due again when the claim runs out, and may go out once more.
   */
  next_attempt_at: Date | null;
  /**
   * Its place in its account's round (the n-th mail the account had admitted in that hour): the
   * sender takes due mail lowest turn first, so one account's thousand mails go out interleaved with
   * every other account's, not before them. Absent on mail stored before the field (taken first).
   */
  turn?: number;
  /** When its quota admitted it (queued): its maximum age counts from here, not from a deferral. */
  queued_at?: Date;
  /**
   * How many claims of the mail were made: the next one is `claim_epoch + 1`, made by inserting its
   * document (store/email-claims.ts), which exactly one of two racing senders can do.
   */
  claim_epoch?: number;
  /**
   * Who took it last (the sender's instance: host and gRPC port). A process killed mid-send that
   * starts again on the same host and port releases its own claims at once instead of waiting
   * for them to run out (jobs/sender.ts).
   */
  claimed_by?: string;
  /**
   * False while nobody has established that the address holds a licence of the account: a sign-in
   * request may be a stranger's address, and whether it is must never show to the vendor. Such a mail is
   * in no list the vendor sees until the sender has checked the address (and if it holds no licence,
   * it is deleted unsent). Absent on other mail, and on mail stored before the field: see CONFIRMED.
   */
  recipient_confirmed?: boolean;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

/**
 * The templates whose sending depends on whether the address is a customer: queued unconfirmed, and
 * shown only once the sender has confirmed the address (a seat rescue goes to a licence's own address).
 */
export const NEEDS_CONFIRMED_RECIPIENT: readonly EmailTemplate[] = ['portal_link'];

/** What the vendor may see of an account's mail: any mail but an unconfirmed one (older sign-ins without the field included). */
const VISIBLE = {
  $or: [{ template: { $nin: NEEDS_CONFIRMED_RECIPIENT } }, { recipient_confirmed: true }],
};

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
    ...(NEEDS_CONFIRMED_RECIPIENT.includes(template) ? { recipient_confirmed: false } : {}),
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
      turn: { type: Number },
      queued_at: { type: Date },
      claim_epoch: { type: Number },
      claimed_by: { type: String },
      recipient_confirmed: { type: Boolean },
      last_error: { type: String, default: null },
      created_at: { type: Date, required: true },
      sent_at: { type: Date, default: null },
    },
    { versionKey: false, collection: 'emails' },
  );
  // The sender's due query (by turn: a round-robin by account), deferred mail whose window ended, and
  // the mail log of an account newest first.
  schema.index({ status: 1, turn: 1, next_attempt_at: 1 });
  schema.index({ status: 1, next_attempt_at: 1, _id: 1 }); // deferred mail, oldest first, ties in a fixed order
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

  /**
   * @param admission the account's mail quota: each new mail is queued or deferred by it (absent: every
   *   mail is queued, as in tests of other rules).
   */
  constructor(
    readonly Email: Model<EmailDoc>,
    private readonly claims: EmailClaimStore,
    readonly admission?: MailAdmission,
  ) {}

  /**
   * Stores a mail once: false if one for this request_key is already there (a redelivered event). A
   * queued mail is first judged by its account's mail quota: within it, it is queued with its turn;
   * past it, stored `deferred` until the quota allows (never dropped).
   */
  async record(doc: EmailDoc): Promise<boolean> {
    const admitted = doc.status === 'queued' && this.admission;
    let stored = doc;
    if (admitted) {
      const verdict = await this.admission!.admit(doc.account_id, doc.created_at);
      stored =
        verdict.status === 'queued'
          ? { ...doc, turn: verdict.turn, queued_at: doc.created_at }
          : { ...doc, status: 'deferred', next_attempt_at: verdict.until };
    }
    try {
      await this.Email.create(stored);
      if (stored.status === 'queued') this.onQueued?.();
      Object.assign(doc, stored);
      return true;
    } catch (err) {
      if (!isDuplicate(err)) throw err;
      if (admitted && stored.status === 'queued') await this.admission!.forget(doc.account_id, doc.created_at);
      return false;
    }
  }

  /**
   * Queued mail that is due, lowest turn first (then the longest waiting): every account's first mail of
   * its hour goes before any account's second, so one account's backlog never holds another's mail.
   */
  due(now: Date, limit: number): Promise<EmailDoc[]> {
    return this.Email.find({ status: 'queued', next_attempt_at: { $lte: now } })
      .sort({ turn: 1, next_attempt_at: 1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<EmailDoc[]>()
      .exec();
  }

  /** Deferred mail whose window has ended (the quota may allow it now), oldest asked first. */
  deferredDue(now: Date, limit: number): Promise<EmailDoc[]> {
    return this.Email.find({ status: 'deferred', next_attempt_at: { $lte: now } })
      .sort({ next_attempt_at: 1, _id: 1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<EmailDoc[]>()
      .exec();
  }

  /** A deferred mail the quota now admits: queued with its turn, due now. */
  async admitDeferred(id: string, turn: number, now: Date): Promise<void> {
    await this.Email.updateOne(
      { _id: id, status: 'deferred' },
      { $set: { status: 'queued', turn, queued_at: now, next_attempt_at: now } },
    );
  }

  /** The quota still refuses the account: its deferred mail due now waits until `until`. */
  async postponeDeferred(accountId: string, now: Date, until: Date): Promise<void> {
    await this.Email.updateMany(
      { account_id: accountId, status: 'deferred', next_attempt_at: { $lte: now } },
      { $set: { next_attempt_at: until } },
    );
  }

  /**
   * Takes a due mail for one attempt, until `until`, as `by`; false if another sender took it first. The
   * claim is the insert of the mail's next claim document (store/email-claims.ts): of senders that read
   * the same mail, exactly one inserts it, on FerretDB too. The mail is read again first, so a sender
   * holding an old copy (sent or claimed since) takes nothing. The mail as claimed, or null.
   */
  async claim(id: string, now: Date, until: Date, by: string): Promise<EmailDoc | null> {
    const mail = await this.Email.findOne({ _id: id }).lean<EmailDoc>().exec();
    if (mail?.status !== 'queued' || !mail.next_attempt_at || mail.next_attempt_at.getTime() > now.getTime())
      return null;
    const epoch = (mail.claim_epoch ?? 0) + 1;
    if (!(await this.claims.insert(id, epoch, by, until))) return null;
    const claimed = { next_attempt_at: until, claimed_by: by, claim_epoch: epoch };
    // Only the claim's holder writes these, so no other update races this one.
    await this.Email.updateOne({ _id: id }, { $set: claimed });
    return { ...mail, ...claimed };
  }

  /** Deletes a bounded batch of claims kept long enough. */
  deleteEndedClaims(now: Date): Promise<number> {
    return this.claims.deleteEnded(now);
  }

  /** Gives back a claim not used (a stop came before the send): due again at `now`, for any sender. */
  async release(id: string, until: Date, now: Date): Promise<void> {
    await this.Email.updateOne(
      { _id: id, status: 'queued', next_attempt_at: until },
      { $set: { next_attempt_at: now } },
    );
  }

  /**
   * Claims `by` still holds at start: its previous process was killed mid-send (a live process with
   * the same identity cannot exist: it would hold the same port). Due again at once; how many.
   */
  async releaseAllOf(by: string, now: Date): Promise<number> {
    const res = await this.Email.updateMany(
      { status: 'queued', claimed_by: by, next_attempt_at: { $gt: now } },
      { $set: { next_attempt_at: now } },
    );
    return res.modifiedCount;
  }

  /** The sender established that the address holds a licence of the account: the mail may show in the log. */
  async confirmRecipient(id: string): Promise<void> {
    await this.Email.updateOne({ _id: id }, { $set: { recipient_confirmed: true } });
  }

  async update(id: string, changes: Partial<EmailDoc>): Promise<void> {
    await this.Email.updateOne({ _id: id }, { $set: changes });
  }

  /**
   * A mail that will not be sent after all, gone without a trace: a sign-in asked for an address holding
   * no licence, or one never confirmed before it was given up.
   */
  async remove(id: string): Promise<void> {
    await this.Email.deleteOne({ _id: id });
  }

  /** Sign-in links sent to an address of the account since `since` (the account_id and to index). */
  signInsSentSince(accountId: string, to: string, since: Date): Promise<number> {
    return this.Email.countDocuments({
      account_id: accountId,
      to,
      template: 'portal_link',
      status: 'sent',
      sent_at: { $gt: since },
    })
      .maxTimeMS(QUERY_MAX_MS)
      .exec();
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
   * not sent yet (or never confirmed) are dropped, and other mail not sent yet fails (there is nobody
   * to send it to). How many mails changed.
   */
  async eraseCustomer(accountId: string, email: string, placeholder: string): Promise<number> {
    const mine = { account_id: accountId, to: email };
    const dropped = await this.Email.deleteMany({
      ...mine,
      template: 'portal_link',
      $or: [{ status: 'queued' }, { recipient_confirmed: { $ne: true } }],
    });
    const stopped = await this.Email.updateMany(
      { ...mine, status: { $in: ['queued', 'deferred'] } },
      { $set: { to: placeholder, status: 'failed', next_attempt_at: null, last_error: 'the customer was erased' } },
    );
    const renamed = await this.Email.updateMany(mine, { $set: { to: placeholder } });
    return dropped.deletedCount + stopped.modifiedCount + renamed.modifiedCount;
  }

  byRequestKey(accountId: string, requestKey: string): Promise<EmailDoc | null> {
    return this.Email.findOne({ request_key: requestKey, account_id: accountId }).lean<EmailDoc>().exec();
  }

  /** One mail of the account's log (an unconfirmed sign-in request is not one). */
  find(accountId: string, id: string): Promise<EmailDoc | null> {
    return this.Email.findOne({ _id: id, account_id: accountId, ...VISIBLE })
      .lean<EmailDoc>()
      .exec();
  }

  /**
   * The mail log of an account. A sign-in request is left out until the sender has established that
   * its address holds a licence of the account (recipient_confirmed), however many attempts failed
   * before (the licence service away): a stranger's is deleted unsent, and the vendor must never learn
   * who asked (the portal never reveals whether an e-mail is a customer's).
   */
  list(accountId: string, page: PageRequest | undefined) {
    return listPage<EmailDoc>(this.Email, { account_id: accountId, ...VISIBLE }, page);
  }
}
