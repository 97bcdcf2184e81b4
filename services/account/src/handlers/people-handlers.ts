import { AppError, checkEmail, newId, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { AccountServiceService, AuditEntry, SessionResponse } from '@licensing/proto';
import { checkAccountName } from '../domain/account';
import { UNKNOWN_USER_HASH, checkPassword, hashPassword, verifyPassword } from '../domain/password';
import {
  SIGNUP_LINK_TTL_MS,
  alreadyRegisteredMail,
  confirmationMail,
  digestSignupToken,
  isSignupToken,
  newSignupToken,
} from '../domain/signup';
import type { Mailer } from '../mail/mailer';
import {
  SESSION_TTL_MS,
  digestSessionToken,
  isSessionToken,
  newSessionSecrets,
  sessionIsLive,
} from '../domain/session';
import type { AccountDoc, UserDoc } from '../store/models';
import type { AccountStore, PeopleStore } from '../store/queries';
import type { AccountConfig } from '../config';
import { toAccount } from './account-handlers';

/** Only after the e-mailed link was used, which proves the address is the reader's. */
const ALREADY_REGISTERED = 'this e-mail already has an account; sign in instead';

type PeopleHandlers = Pick<
  Handlers<typeof AccountServiceService>,
  'signUp' | 'confirmSignUp' | 'signIn' | 'getSession' | 'endSession' | 'listAuditEntries'
>;

const WRONG_CREDENTIALS = 'wrong e-mail or password';
const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export function peopleHandlers(
  ctx: ServiceContext<AccountConfig>,
  accounts: AccountStore,
  people: PeopleStore,
  mailer: Mailer | undefined,
): PeopleHandlers {
  const baseUrl = ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const userJson = (u: UserDoc) => ({
    id: u._id,
    accountId: u.account_id,
    email: u.email,
    createdAt: u.created_at.toISOString(),
  });

  async function openSession(user: UserDoc, account: AccountDoc): Promise<SessionResponse> {
    const now = ctx.clock.now();
    const { token, digest, csrfToken } = newSessionSecrets();
    const expires = new Date(now.getTime() + SESSION_TTL_MS);
    await people.insertSession({
      _id: digest,
      user_id: user._id,
      account_id: account._id,
      csrf_token: csrfToken,
      created_at: now,
      expires_at: expires,
      ended_at: null,
    });
    return { token, csrfToken, expiresAt: expires.toISOString(), user: userJson(user), account: toAccount(account) };
  }

  return {
    async signUp(req) {
      if (!mailer) throw new AppError('forbidden', 'sign-up is closed on this server; ask its operator for an account');
      const name = checkAccountName(req.accountName);
      const email = checkEmail('email', req.email).toLowerCase();
      checkPassword(req.password);
      // Both cases hash the password and send one mail, so neither answers sooner.
      const passwordHash = await hashPassword(req.password);
      if (await people.findUserByEmail(email)) {
        await mailer.send(alreadyRegisteredMail(email, `${baseUrl}/dashboard/signin`));
        return {};
      }
      const now = ctx.clock.now();
      const { token, digest } = newSignupToken();
      await people.insertPendingSignup({
        _id: digest,
        email,
        account_name: name,
        password_hash: passwordHash,
        created_at: now,
        expires_at: new Date(now.getTime() + SIGNUP_LINK_TTL_MS),
      });
      await mailer.send(confirmationMail(email, name, `${baseUrl}/dashboard/signup/confirm?token=${token}`));
      return {};
    },

    async confirmSignUp(req) {
      const used = new AppError('invalid_request', 'this link has expired or was already used; sign up again', [
        { field: 'token', message: 'expired or already used' },
      ]);
      if (!isSignupToken(req.token)) throw used;
      const pending = await people.takePendingSignup(digestSignupToken(req.token));
      const now = ctx.clock.now();
      if (!pending || pending.expires_at.getTime() <= now.getTime()) throw used;
      const account: AccountDoc = {
        _id: newId('acct'),
        name: pending.account_name,
        plan: 'free',
        per_minute_limit: null,
        per_hour_limit: null,
        created_at: now,
      };
      const user: UserDoc = {
        _id: newId('user'),
        account_id: account._id,
        email: pending.email,
        password_hash: pending.password_hash,
        created_at: now,
      };
      // The link proves the address is theirs: from here on it may say the e-mail is taken.
      if (await people.findUserByEmail(user.email)) throw new AppError('conflict', ALREADY_REGISTERED);
      await accounts.insertAccount(account);
      try {
        await people.insertUser(user);
      } catch (err) {
        await people.deleteAccount(account._id); // nothing half-written
        if (isDuplicate(err)) throw new AppError('conflict', ALREADY_REGISTERED);
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
      const [user, account] = await Promise.all([
        people.findUser(session.user_id),
        accounts.findAccount(session.account_id),
      ]);
      if (!user || !account) throw gone();
      return {
        token: '',
        csrfToken: session.csrf_token,
        expiresAt: session.expires_at.toISOString(),
        user: userJson(user),
        account: toAccount(account),
      };
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
        if (k.revoked_at)
          entries.push({
            type: 'api_key.revoked',
            actor: k.revoked_by ?? 'operator',
            at: k.revoked_at.toISOString(),
            ...key,
          });
      }
      entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.type === 'api_key.revoked' ? -1 : 1));
      return { data: entries.slice(0, limit) };
    },
  };
}
