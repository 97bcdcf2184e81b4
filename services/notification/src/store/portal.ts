import { deleteBefore } from '@licensing/runtime';
import { Schema, type Connection, type Model } from 'mongoose';

/** A one-time sign-in link: made by the sender when it sends the mail (never when it is asked for). */
export interface PortalLinkDoc {
  /** The id of the mail that carries it (eml_…): each attempt of that mail replaces the token. */
  _id: string;
  /** sha256 of the token in the mail; the raw token is never stored. */
  token_digest: string;
  account_id: string;
  /** Lower-cased. */
  email: string;
  /** '' for a sign-in; the licence whose machines the portal opens on for a seat rescue. */
  license_key: string;
  expires_at: Date;
  created_at: Date;
}

/**
 * That a link was redeemed: its insert into the unique _id index is the gate of single use.
 * FerretDB's updates are not atomic (two "set used where unused" can both match), an insert of
 * the same _id is refused to all but one.
 */
export interface PortalLinkUseDoc {
  /** The link's id. */
  _id: string;
  /** The link's own expiry: after it the link cannot be redeemed anyway, and the mark goes. */
  expires_at: Date;
  created_at: Date;
}

/** A signed-in customer (the cookie holds the token). */
export interface PortalSessionDoc {
  /** sha256 of the session token. */
  _id: string;
  account_id: string;
  /** Lower-cased. */
  email: string;
  csrf_token: string;
  license_key: string;
  expires_at: Date;
  created_at: Date;
}

// Real MongoDB removes expired documents through the TTL index; FerretDB 1.x accepts the option
// and ignores it (FerretDB/FerretDB#2415), so the cleanup job deletes them in bounded batches
// through the same index, and reads check expires_at.
const expiring = { type: Date, required: true, index: { expireAfterSeconds: 0 } };

export function portalModels(conn: Connection) {
  const links = new Schema<PortalLinkDoc>(
    {
      _id: String,
      token_digest: { type: String, required: true },
      account_id: { type: String, required: true },
      email: { type: String, required: true },
      license_key: { type: String, default: '' },
      expires_at: expiring,
      created_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'portal_links' },
  );
  links.index({ token_digest: 1 }, { unique: true });
  // Erasure of a customer.
  links.index({ account_id: 1, email: 1 });

  const uses = new Schema<PortalLinkUseDoc>(
    {
      _id: String,
      expires_at: expiring,
      created_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'portal_link_uses' },
  );

  const sessions = new Schema<PortalSessionDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      email: { type: String, required: true },
      csrf_token: { type: String, required: true },
      license_key: { type: String, default: '' },
      expires_at: expiring,
      created_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'portal_sessions' },
  );
  sessions.index({ account_id: 1, email: 1 });

  return {
    Link: conn.model<PortalLinkDoc>('PortalLink', links),
    LinkUse: conn.model<PortalLinkUseDoc>('PortalLinkUse', uses),
    Session: conn.model<PortalSessionDoc>('PortalSession', sessions),
  };
}

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

/** At most this many expired documents per collection are deleted per cleanup pass. */
export const CLEANUP_BATCH = 500;

export class PortalStore {
  constructor(
    private readonly m: {
      Link: Model<PortalLinkDoc>;
      LinkUse: Model<PortalLinkUseDoc>;
      Session: Model<PortalSessionDoc>;
    },
  ) {}

  /** Makes the link of a mail, or gives it a new token (a new attempt of the same mail). */
  async putLink(doc: PortalLinkDoc): Promise<void> {
    const { _id, ...rest } = doc;
    await this.m.Link.updateOne({ _id }, { $set: rest }, { upsert: true });
  }

  linkByDigest(digest: string): Promise<PortalLinkDoc | null> {
    return this.m.Link.findOne({ token_digest: digest }).lean<PortalLinkDoc>().exec();
  }

  /** Marks a link used: true for the one caller whose insert the unique index took. */
  async markUsed(link: PortalLinkDoc, now: Date): Promise<boolean> {
    try {
      await this.m.LinkUse.create({ _id: link._id, expires_at: link.expires_at, created_at: now });
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  async deleteLink(id: string): Promise<void> {
    await this.m.Link.deleteOne({ _id: id });
  }

  async insertSession(doc: PortalSessionDoc): Promise<void> {
    await this.m.Session.create(doc);
  }

  session(digest: string): Promise<PortalSessionDoc | null> {
    return this.m.Session.findOne({ _id: digest }).lean<PortalSessionDoc>().exec();
  }

  async endSession(accountId: string, digest: string): Promise<void> {
    await this.m.Session.deleteOne({ _id: digest, account_id: accountId });
  }

  /** Deletes a customer's sessions and links in an account: how many went. */
  async eraseCustomer(accountId: string, email: string): Promise<number> {
    const [s, l] = await Promise.all([
      this.m.Session.deleteMany({ account_id: accountId, email }),
      this.m.Link.deleteMany({ account_id: accountId, email }),
    ]);
    return s.deletedCount + l.deletedCount;
  }

  /**
   * Deletes up to CLEANUP_BATCH expired documents of each collection (through the expires_at
   * index): a pass costs the same however much is stored. How many went.
   */
  async deleteExpired(now: Date): Promise<number> {
    const counts = await Promise.all([
      deleteBefore(this.m.Link, 'expires_at', now, CLEANUP_BATCH),
      deleteBefore(this.m.LinkUse, 'expires_at', now, CLEANUP_BATCH),
      deleteBefore(this.m.Session, 'expires_at', now, CLEANUP_BATCH),
    ]);
    return counts.reduce((a, b) => a + b, 0);
  }
}
