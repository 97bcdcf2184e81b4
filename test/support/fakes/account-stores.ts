import type { AccountActionEvent, DomainEvent, PageRequest } from '@licensing/proto';
import type { Mail, Mailer } from '../../../services/account/src/mail/mailer';
import type {
  AccountDoc,
  AccountModels,
  ApiKeyDoc,
  MfaFields,
  PasswordResetDoc,
  PendingSignupDoc,
  SessionDoc,
  UserDoc,
} from '../../../services/account/src/store/models';
import type { AccountStore, PeopleStore } from '../../../services/account/src/store/queries';
import { duplicateKey, modelToken, pageOf } from './common';

const accountModels = () =>
  ({
    Account: modelToken<AccountDoc>('Account'),
    ApiKey: modelToken<ApiKeyDoc>('ApiKey'),
  }) as unknown as AccountModels;

const withoutDigest = ({ digest: _d, ...k }: ApiKeyDoc) => structuredClone(k) as ApiKeyDoc;

/** In memory, with the real AccountStore's scoping and its conditional revocation. */
export class FakeAccountStore implements AccountStore {
  readonly models = accountModels();
  readonly accounts = new Map<string, AccountDoc>();
  readonly keys = new Map<string, ApiKeyDoc>();
  /** The events each write recorded along with it, in order (the real documents' outbox). */
  readonly events: DomainEvent[] = [];
  /** Every touchLastUsed(), in order. */
  readonly touched: { id: string; at: Date }[] = [];
  /** Set to make touchLastUsed fail (the store is down for that write). */
  touchFails = false;

  async insertAccount(doc: AccountDoc): Promise<void> {
    if (this.accounts.has(doc._id)) throw duplicateKey();
    this.accounts.set(doc._id, structuredClone(doc));
  }

  async findAccount(id: string): Promise<AccountDoc | null> {
    const a = this.accounts.get(id);
    return a ? structuredClone(a) : null;
  }

  async updateAccount(
    id: string,
    changes: Partial<
      Pick<AccountDoc, 'plan' | 'per_minute_limit' | 'per_hour_limit' | 'support_email' | 'require_mfa'>
    >,
    events: (after: AccountDoc) => DomainEvent[],
  ): Promise<AccountDoc | null> {
    const current = this.accounts.get(id);
    if (!current) return null;
    Object.assign(current, changes);
    const after = structuredClone(current);
    this.events.push(...events(after));
    return after;
  }

  /** Within the cap, as the real store's unique slots make it (numbered slots; a revoked key frees its own). */
  async insertKey(
    doc: Omit<ApiKeyDoc, 'outbox' | 'slot_key'>,
    events: DomainEvent[],
    maxLive: number,
  ): Promise<ApiKeyDoc | 'full' | 'contended'> {
    if ((await this.countLiveKeys(doc.account_id)) >= maxLive) return 'full';
    const stored = { ...doc, slot_key: `${(await this.countLiveKeys(doc.account_id)) + 1}` };
    this.keys.set(doc._id, structuredClone(stored));
    this.events.push(...events);
    return structuredClone(stored);
  }

  async countLiveKeys(accountId: string): Promise<number> {
    return [...this.keys.values()].filter((k) => k.account_id === accountId && !k.revoked_at).length;
  }

  async backfillKeySlots(): Promise<number> {
    return 0;
  }

  async findKeyByDigest(digest: string): Promise<ApiKeyDoc | null> {
    const k = [...this.keys.values()].find((x) => x.digest === digest);
    return k ? structuredClone(k) : null;
  }

  async findKey(id: string, accountId?: string): Promise<ApiKeyDoc | null> {
    const k = this.keys.get(id);
    return k && (!accountId || k.account_id === accountId) ? withoutDigest(k) : null;
  }

  async revokeKey(
    id: string,
    accountId: string,
    at: Date,
    actor: string,
    event: (key: ApiKeyDoc) => DomainEvent,
  ): Promise<ApiKeyDoc | null> {
    const k = this.keys.get(id);
    if (!k || k.account_id !== accountId || k.revoked_at) return null;
    Object.assign(k, { revoked_at: at, revoked_by: actor, slot_key: `freed:${id}` });
    const after = withoutDigest(k);
    this.events.push(event(after));
    return after;
  }

  async touchLastUsed(id: string, at: Date): Promise<void> {
    this.touched.push({ id, at });
    if (this.touchFails) throw new Error('store down');
    const k = this.keys.get(id);
    if (k) k.last_used_at = at;
  }

  async keyNames(ids: string[]): Promise<Map<string, string>> {
    return new Map(ids.flatMap((id) => (this.keys.has(id) ? [[id, this.keys.get(id)!.name] as const] : [])));
  }

  async listKeys(accountId: string, page: PageRequest | undefined, revoked = false) {
    return pageOf(
      [...this.keys.values()].filter((k) => k.account_id === accountId && !!k.revoked_at === revoked),
      page,
    );
  }
}

/** In memory, with the real PeopleStore's unique e-mail and its once-only sign-up links. */
export class FakePeopleStore implements PeopleStore {
  readonly models = accountModels();
  readonly users = new Map<string, UserDoc>();
  readonly sessions = new Map<string, SessionDoc>();
  readonly pending = new Map<string, PendingSignupDoc>();
  /** Set to make the next insertUser meet a duplicate e-mail (another sign-up of it won the race). */
  userRace = false;

  constructor(private readonly accounts: FakeAccountStore) {}

  async insertUser(doc: UserDoc): Promise<void> {
    if (this.userRace || [...this.users.values()].some((u) => u.email === doc.email)) {
      this.userRace = false;
      throw duplicateKey();
    }
    this.users.set(doc._id, structuredClone(doc));
  }

  async findUserByEmail(email: string): Promise<UserDoc | null> {
    const u = [...this.users.values()].find((x) => x.email === email);
    return u ? structuredClone(u) : null;
  }

  async findUser(id: string): Promise<UserDoc | null> {
    const u = this.users.get(id);
    return u ? structuredClone(u) : null;
  }

  async insertSession(doc: SessionDoc): Promise<void> {
    this.sessions.set(doc._id, structuredClone(doc));
  }

  async findSession(digest: string): Promise<SessionDoc | null> {
    const s = this.sessions.get(digest);
    return s ? structuredClone(s) : null;
  }

  async endSession(digest: string, at: Date): Promise<void> {
    const s = this.sessions.get(digest);
    if (s && s.ended_at === null) s.ended_at = at;
  }

  async keyActions(accountId: string, limit: number): Promise<{ created: ApiKeyDoc[]; revoked: ApiKeyDoc[] }> {
    const own = [...this.accounts.keys.values()].filter((k) => k.account_id === accountId);
    const latest = (keys: ApiKeyDoc[], at: (k: ApiKeyDoc) => number) =>
      keys
        .sort((a, b) => at(b) - at(a))
        .slice(0, limit)
        .map(withoutDigest);
    return {
      created: latest(own, (k) => k.created_at.getTime()),
      revoked: latest(
        own.filter((k) => k.revoked_at),
        (k) => k.revoked_at!.getTime(),
      ),
    };
  }

  async insertPendingSignup(doc: PendingSignupDoc): Promise<void> {
    this.pending.set(doc._id, structuredClone(doc));
  }

  async takePendingSignup(digest: string): Promise<PendingSignupDoc | null> {
    const p = this.pending.get(digest);
    this.pending.delete(digest);
    return p ? structuredClone(p) : null;
  }

  async deleteAccount(id: string): Promise<void> {
    this.accounts.accounts.delete(id);
  }

  async deleteUser(id: string): Promise<void> {
    this.users.delete(id);
  }

  readonly resets = new Map<string, PasswordResetDoc>();
  /** The account actions recorded with each password change, in order. */
  readonly actions: AccountActionEvent[] = [];

  async sessionsOf(userId: string): Promise<SessionDoc[]> {
    return [...this.sessions.values()]
      .filter((s) => s.user_id === userId && s.ended_at === null)
      .map((s) => structuredClone(s));
  }

  async touchSession(digest: string, at: Date): Promise<void> {
    const s = this.sessions.get(digest);
    if (s) s.last_seen_at = at;
  }

  async endSessionsOf(userId: string, at: Date, keep = ''): Promise<number> {
    let ended = 0;
    for (const s of this.sessions.values())
      if (s.user_id === userId && s.ended_at === null && s._id !== keep) {
        s.ended_at = at;
        ended++;
      }
    return ended;
  }

  async insertPasswordReset(doc: PasswordResetDoc): Promise<void> {
    this.resets.set(doc._id, structuredClone(doc));
  }

  async takePasswordReset(digest: string): Promise<PasswordResetDoc | null> {
    const r = this.resets.get(digest);
    this.resets.delete(digest);
    return r ? structuredClone(r) : null;
  }

  async recordAction(_userId: string, action: AccountActionEvent): Promise<void> {
    this.actions.push(action);
  }

  async setPassword(userId: string, passwordHash: string, action: AccountActionEvent): Promise<void> {
    const u = this.users.get(userId);
    if (u) u.password_hash = passwordHash;
    this.actions.push(action);
  }

  async startMfaEnrolment(userId: string, secret: string, at: Date): Promise<void> {
    const u = this.users.get(userId);
    if (u) u.mfa_enrolment = { secret, created_at: at };
  }

  async enableMfa(userId: string, mfa: MfaFields, action: AccountActionEvent): Promise<void> {
    const u = this.users.get(userId);
    if (u) Object.assign(u, { mfa: structuredClone(mfa), mfa_enrolment: null });
    this.actions.push(action);
  }

  async disableMfa(userId: string, action: AccountActionEvent): Promise<void> {
    const u = this.users.get(userId);
    if (u) Object.assign(u, { mfa: null, mfa_enrolment: null });
    this.actions.push(action);
  }

  async takeTotpStep(userId: string, step: number): Promise<boolean> {
    const mfa = this.users.get(userId)?.mfa;
    if (!mfa || mfa.last_step >= step) return false;
    mfa.last_step = step;
    return true;
  }

  async takeRecoveryCode(userId: string, digest: string): Promise<boolean> {
    const mfa = this.users.get(userId)?.mfa;
    if (!mfa?.recovery.includes(digest)) return false;
    mfa.recovery = mfa.recovery.filter((d) => d !== digest);
    return true;
  }

  async countCodeFailure(digest: string): Promise<number> {
    const s = this.sessions.get(digest);
    if (!s) return Number.POSITIVE_INFINITY;
    s.code_failures = (s.code_failures ?? 0) + 1;
    return s.code_failures;
  }

  async clearMustEnrol(userId: string): Promise<void> {
    for (const s of this.sessions.values()) if (s.user_id === userId) s.must_enrol_mfa = false;
  }
}

/** Keeps the mails it is given, in order. */
export class RecordingMailer implements Mailer {
  readonly describe = 'memory';
  readonly sent: Mail[] = [];

  async send(mail: Mail): Promise<void> {
    this.sent.push(mail);
  }
}
