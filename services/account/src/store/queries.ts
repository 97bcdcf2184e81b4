import { SLOT_ROUNDS, chooseSlot, countMatching, listPage, outboxOf, withEvents } from '@licensing/runtime';
import type { AccountActionEvent, DomainEvent, PageRequest } from '@licensing/proto';
import { backfillKeySlots } from '../jobs/key-slots';
import type {
  AccountDoc,
  AccountModels,
  ApiKeyDoc,
  MfaFields,
  PasswordResetDoc,
  PendingSignupDoc,
  SessionDoc,
  UserDoc,
} from './models';

export class AccountStore {
  constructor(readonly models: AccountModels) {}

  async insertAccount(doc: AccountDoc): Promise<void> {
    await this.models.Account.create(doc);
  }

  findAccount(id: string): Promise<AccountDoc | null> {
    return this.models.Account.findById(id, { outbox: 0 }).lean<AccountDoc>().exec();
  }

  /** Applies the changes and records the event in the same write. */
  async updateAccount(
    id: string,
    changes: Partial<
      Pick<AccountDoc, 'plan' | 'per_minute_limit' | 'per_hour_limit' | 'support_email' | 'require_mfa'>
    >,
    events: (after: AccountDoc) => DomainEvent[],
  ): Promise<AccountDoc | null> {
    const current = await this.findAccount(id);
    if (!current) return null;
    const after = { ...current, ...changes };
    await this.models.Account.updateOne({ _id: id }, { $set: { ...changes, ...withEvents(events(after)) } });
    return after;
  }

  /**
   * Stores a new key in a free slot of the account's `maxLive` (runtime/store/slots.ts), with its events, in
   * a constant number of store operations: one count (a full account is refused there), then at most
   * SLOT_ROUNDS rounds of one read of the taken slots and one unique insert. 'full': the account has
   * its most live keys; 'contended': every round lost a race while slots were free.
   */
  async insertKey(
    doc: Omit<ApiKeyDoc, 'outbox' | 'slot_key'>,
    events: DomainEvent[],
    maxLive: number,
  ): Promise<ApiKeyDoc | 'full' | 'contended'> {
    if ((await this.countLiveKeys(doc.account_id)) >= maxLive) return 'full';
    for (let round = 0; round < SLOT_ROUNDS; round++) {
      const taken = await this.models.ApiKey.find({ account_id: doc.account_id, revoked_at: null }, { slot_key: 1 })
        .lean<Pick<ApiKeyDoc, 'slot_key'>[]>()
        .exec();
      const slot = chooseSlot(new Set(taken.map((k) => k.slot_key)), maxLive);
      if (slot === null) return 'full';
      const stored = { ...doc, slot_key: slot };
      try {
        await this.models.ApiKey.create({ ...stored, ...outboxOf(events) });
        return stored;
      } catch (err) {
        if ((err as { code?: number })?.code !== 11000) throw err; // the slot was just taken: choose again
      }
    }
    return 'contended';
  }

  /** Live keys of the account (what the cap counts). */
  countLiveKeys(accountId: string): Promise<number> {
    return countMatching(this.models.ApiKey, { account_id: accountId, revoked_at: null });
  }

  /** Keys stored before slots existed get one (the migration 0003-api-key-slots; jobs/key-slots.ts). */
  backfillKeySlots(): Promise<number> {
    return backfillKeySlots(this.models.ApiKey.db);
  }

  findKeyByDigest(digest: string): Promise<ApiKeyDoc | null> {
    return this.models.ApiKey.findOne({ digest }, { outbox: 0 }).lean<ApiKeyDoc>().exec();
  }

  findKey(id: string, accountId?: string): Promise<ApiKeyDoc | null> {
    return this.models.ApiKey.findOne(accountId ? { _id: id, account_id: accountId } : { _id: id }, {
      outbox: 0,
      digest: 0,
    })
      .lean<ApiKeyDoc>()
      .exec();
  }

  /** Revokes only a live key, in one conditional write that also records who did it and the event. */
  async revokeKey(
    id: string,
    accountId: string,
    at: Date,
    actor: string,
    event: (key: ApiKeyDoc) => DomainEvent,
  ): Promise<ApiKeyDoc | null> {
    const current = await this.findKey(id, accountId);
    if (!current || current.revoked_at) return null;
    const filter = { _id: id, revoked_at: null, account_id: accountId };
    // No projection here: FerretDB's findAndModify does not support one.
    const updated = await this.models.ApiKey.findOneAndUpdate(
      filter,
      {
        $set: {
          revoked_at: at,
          revoked_by: actor,
          slot_key: `freed:${id}`, // its place under the cap is free again
          ...withEvents([event({ ...current, revoked_at: at, revoked_by: actor })]),
        },
      },
      { returnDocument: 'after' },
    )
      .lean<ApiKeyDoc>()
      .exec();
    if (!updated) return null;
    const { outbox: _outbox, digest: _digest, ...key } = updated;
    return key as ApiKeyDoc;
  }

  async touchLastUsed(id: string, at: Date): Promise<void> {
    await this.models.ApiKey.updateOne({ _id: id }, { $set: { last_used_at: at } });
  }

  /** The names of these keys (of any account), by id. */
  async keyNames(ids: string[]): Promise<Map<string, string>> {
    const found = await this.models.ApiKey.find({ _id: { $in: ids } }, { name: 1 }).lean<
      { _id: string; name: string }[]
    >();
    return new Map(found.map((k) => [k._id, k.name]));
  }

  /** Live keys (or revoked ones), newest first, a page at a time. */
  listKeys(accountId: string, page: PageRequest | undefined, revoked = false) {
    return listPage<ApiKeyDoc>(
      this.models.ApiKey,
      { account_id: accountId, revoked_at: revoked ? { $ne: null } : null },
      page,
    );
  }
}

export class PeopleStore {
  constructor(readonly models: AccountModels) {}

  async insertUser(doc: UserDoc): Promise<void> {
    await this.models.User.create(doc);
  }

  findUserByEmail(email: string): Promise<UserDoc | null> {
    return this.models.User.findOne({ email }, { outbox: 0 }).lean<UserDoc>().exec();
  }

  findUser(id: string): Promise<UserDoc | null> {
    return this.models.User.findById(id, { outbox: 0 }).lean<UserDoc>().exec();
  }

  async insertSession(doc: SessionDoc): Promise<void> {
    await this.models.Session.create(doc);
  }

  /** By _id (the token's digest): a primary-key read even on FerretDB. */
  findSession(digest: string): Promise<SessionDoc | null> {
    return this.models.Session.findById(digest).lean<SessionDoc>().exec();
  }

  async endSession(digest: string, at: Date): Promise<void> {
    await this.models.Session.updateOne({ _id: digest, ended_at: null }, { $set: { ended_at: at } });
  }

  /** A person's sessions not ended (expired ones are left out by the caller). */
  sessionsOf(userId: string): Promise<SessionDoc[]> {
    return this.models.Session.find({ user_id: userId, ended_at: null }).lean<SessionDoc[]>().exec();
  }

  async touchSession(digest: string, at: Date): Promise<void> {
    await this.models.Session.updateOne({ _id: digest }, { $set: { last_seen_at: at } });
  }

  /** Ends every live session of a person but `keep` (a digest): how many ended. */
  async endSessionsOf(userId: string, at: Date, keep = ''): Promise<number> {
    const res = await this.models.Session.updateMany(
      { user_id: userId, ended_at: null, ...(keep ? { _id: { $ne: keep } } : {}) },
      { $set: { ended_at: at } },
    );
    return res.modifiedCount;
  }

  async insertPasswordReset(doc: PasswordResetDoc): Promise<void> {
    await this.models.PasswordReset.create(doc);
  }

  /** Takes a reset link's record (it works once): the record, or null when unknown or already taken. */
  takePasswordReset(digest: string): Promise<PasswordResetDoc | null> {
    return this.models.PasswordReset.findOneAndDelete({ _id: digest }).lean<PasswordResetDoc>().exec();
  }

  /** Records an account action about a person (a sign-in) through their outbox. */
  async recordAction(userId: string, action: AccountActionEvent): Promise<void> {
    await this.models.User.updateOne({ _id: userId }, { $set: withEvents([action as unknown as DomainEvent]) });
  }

  /** A new password hash, with the account action that records it (through the person's outbox). */
  async setPassword(userId: string, passwordHash: string, action: AccountActionEvent): Promise<void> {
    await this.models.User.updateOne(
      { _id: userId },
      { $set: { password_hash: passwordHash, ...withEvents([action as unknown as DomainEvent]) } },
    );
  }

  /** A secret shown for enrolment (sealed), replacing one shown before. */
  async startMfaEnrolment(userId: string, secret: string, at: Date): Promise<void> {
    await this.models.User.updateOne({ _id: userId }, { $set: { mfa_enrolment: { secret, created_at: at } } });
  }

  /** Two-factor sign-in on, with the action that records it; the enrolment's secret is dropped. */
  async enableMfa(userId: string, mfa: MfaFields, action: AccountActionEvent): Promise<void> {
    await this.models.User.updateOne(
      { _id: userId },
      { $set: { mfa, mfa_enrolment: null, ...withEvents([action as unknown as DomainEvent]) } },
    );
  }

  async disableMfa(userId: string, action: AccountActionEvent): Promise<void> {
    await this.models.User.updateOne(
      { _id: userId },
      { $set: { mfa: null, mfa_enrolment: null, ...withEvents([action as unknown as DomainEvent]) } },
    );
  }

  /**
   * Takes a TOTP step: true when it is later than the last one taken (then it becomes the last), false
   * when a code of this step or a later one was accepted already. The filter makes it a compare-and-set.
   */
  async takeTotpStep(userId: string, step: number): Promise<boolean> {
    const res = await this.models.User.updateOne(
      { _id: userId, 'mfa.last_step': { $lt: step } },
      { $set: { 'mfa.last_step': step } },
    );
    return res.modifiedCount === 1;
  }

  /** Uses up a recovery code: true once for each code the person has, false after. */
  async takeRecoveryCode(userId: string, digest: string): Promise<boolean> {
    const res = await this.models.User.updateOne(
      { _id: userId, 'mfa.recovery': digest },
      { $pull: { 'mfa.recovery': digest } },
    );
    return res.modifiedCount === 1;
  }

  /** Counts a wrong code against a session waiting for one: the count after it. */
  async countCodeFailure(digest: string): Promise<number> {
    const after = await this.models.Session.findOneAndUpdate(
      { _id: digest },
      { $inc: { code_failures: 1 } },
      // No projection: FerretDB's findAndModify does not take one.
      { returnDocument: 'after' },
    )
      .lean<SessionDoc>()
      .exec();
    return after?.code_failures ?? Number.POSITIVE_INFINITY;
  }

  /** The person enrolled: none of their sessions is sent to enrolment any more. */
  async clearMustEnrol(userId: string): Promise<void> {
    await this.models.Session.updateMany(
      { user_id: userId, must_enrol_mfa: true },
      { $set: { must_enrol_mfa: false } },
    );
  }

  /**
   * The latest key actions, read from the keys themselves (created_by / revoked_by) by time: the
   * `limit` latest creations and the `limit` latest revocations, whenever each key was created.
   */
  async keyActions(accountId: string, limit: number): Promise<{ created: ApiKeyDoc[]; revoked: ApiKeyDoc[] }> {
    const [created, revoked] = await Promise.all([
      this.models.ApiKey.find({ account_id: accountId }, { outbox: 0, digest: 0 })
        .sort({ created_at: -1 })
        .limit(limit)
        .lean<ApiKeyDoc[]>()
        .exec(),
      this.models.ApiKey.find({ account_id: accountId, revoked_at: { $ne: null } }, { outbox: 0, digest: 0 })
        .sort({ revoked_at: -1 })
        .limit(limit)
        .lean<ApiKeyDoc[]>()
        .exec(),
    ]);
    return { created, revoked };
  }

  async insertPendingSignup(doc: PendingSignupDoc): Promise<void> {
    await this.models.PendingSignup.create(doc);
  }

  /** The pending sign-up of a link, removed as it is read: a link works once. */
  takePendingSignup(digest: string): Promise<PendingSignupDoc | null> {
    return this.models.PendingSignup.findOneAndDelete({ _id: digest }).lean<PendingSignupDoc>().exec();
  }

  /** Removes an account created by a sign-up whose owner could not be stored (nothing half-written). */
  /** A removed member's login: they cannot sign in again (their address is free for a new invitation). */
  async deleteUser(id: string): Promise<void> {
    await this.models.User.deleteOne({ _id: id });
  }

  async deleteAccount(id: string): Promise<void> {
    await this.models.Account.deleteOne({ _id: id });
  }
}
