import { AppError, checkEmail, newId, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { AccountServiceService, AuditEntry, SessionResponse } from '@licensing/proto';
import { checkAccountName } from '../domain/account';
import { UNKNOWN_USER_HASH, checkPassword, hashPassword, verifyPassword } from '../domain/password';
import { SESSION_TTL_MS, digestSessionToken, isSessionToken, newSessionSecrets, sessionIsLive } from '../domain/session';
import type { AccountDoc, UserDoc } from '../store/models';
import type { AccountStore, PeopleStore } from '../store/queries';
import type { AccountConfig } from '../config';
import { toAccount } from './account-handlers';

/** Says neither that the e-mail is registered nor that it is not. */
export const SIGNUP_REFUSED = 'no account could be created with these details; if you already have one, sign in';

type PeopleHandlers = Pick<Handlers<typeof AccountServiceService>, 'signUp' | 'signIn' | 'getSession' | 'endSession' | 'listAuditEntries'>;

const WRONG_CREDENTIALS = 'wrong e-mail or password';
const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export function peopleHandlers(ctx: ServiceContext<AccountConfig>, accounts: AccountStore, people: PeopleStore): PeopleHandlers {
  const userJson = (u: UserDoc) => ({ id: u._id, accountId: u.account_id, email: u.email, createdAt: u.created_at.toISOString() });

  async function openSession(user: UserDoc, account: AccountDoc): Promise<SessionResponse> {
    const now = ctx.clock.now();
    const { token, digest, csrfToken } = newSessionSecrets();
    const expires = new Date(now.getTime() + SESSION_TTL_MS);
    await people.insertSession({ _id: digest, user_id: user._id, account_id: account._id, csrf_token: csrfToken, created_at: now, expires_at: expires, ended_at: null });
    return { token, csrfToken, expiresAt: expires.toISOString(), user: userJson(user), account: toAccount(account) };
  }

  return {
    async signUp(req) {
      const name = checkAccountName(req.accountName);
      const email = checkEmail('email', req.email).toLowerCase();
      checkPassword(req.password);
      // The password is hashed first either way, so a registered e-mail is not answered sooner.
      const passwordHash = await hashPassword(req.password);
      if (await people.findUserByEmail(email)) throw new AppError('conflict', SIGNUP_REFUSED);
      const now = ctx.clock.now();
      const account: AccountDoc = { _id: newId('acct'), name, plan: 'free', per_minute_limit: null, per_hour_limit: null, created_at: now };
      const user: UserDoc = { _id: newId('user'), account_id: account._id, email, password_hash: passwordHash, created_at: now };
      await accounts.insertAccount(account);
      try {
        await people.insertUser(user);
      } catch (err) {
        await people.deleteAccount(account._id); // nothing half-written
        if (isDuplicate(err)) throw new AppError('conflict', SIGNUP_REFUSED);
        throw err;
      }
      return openSession(user, account);
    },

    async signIn(req) {
      const email = req.email.trim().toLowerCase();
      const user = email && email.length <= 254 ? await people.findUserByEmail(email) : null;
      // Verify against a dummy hash for unknown e-mails: both failures take the same time.
      const ok = await verifyPassword(req.password.slice(0, 200), user?.password_hash ?? UNKNOWN_USER_HASH);
      if (!user || !ok) throw new AppError('unauthorized', WRONG_CREDENTIALS);
      const account = await accounts.findAccount(user.account_id);
      if (!account) throw new AppError('unauthorized', WRONG_CREDENTIALS);
      return openSession(user, account);
    },

    async getSession(req) {
      const gone = () => new AppError('unauthorized', 'the session has ended; sign in again');
      if (!isSessionToken(req.token)) throw gone();
      const session = await people.findSession(digestSessionToken(req.token));
      if (!session || !sessionIsLive(session, ctx.clock.now())) throw gone();
      const [user, account] = await Promise.all([people.findUser(session.user_id), accounts.findAccount(session.account_id)]);
      if (!user || !account) throw gone();
      return { token: '', csrfToken: session.csrf_token, expiresAt: session.expires_at.toISOString(), user: userJson(user), account: toAccount(account) };
    },

    async endSession(req) {
      if (isSessionToken(req.token)) await people.endSession(digestSessionToken(req.token), ctx.clock.now());
      return {};
    },

    async listAuditEntries(req) {
      const limit = Math.min(Math.max(req.limit || 10, 1), 100);
      const entries: AuditEntry[] = [];
      for (const k of await people.recentKeys(req.accountId)) {
        const key = { keyId: k._id, keyPrefix: k.prefix, keyName: k.name };
        entries.push({ type: 'api_key.created', actor: k.created_by, at: k.created_at.toISOString(), ...key });
        if (k.revoked_at) entries.push({ type: 'api_key.revoked', actor: k.revoked_by ?? 'operator', at: k.revoked_at.toISOString(), ...key });
      }
      entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.type === 'api_key.revoked' ? -1 : 1));
      return { data: entries.slice(0, limit) };
    },
  };
}
