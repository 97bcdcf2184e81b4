import { randomBytes } from 'node:crypto';
import { Account, SessionResponse, User, type AccountServiceService } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';
import { checkPassword } from '../../../services/account/src/domain/password';

// What the account service answers the web component about dashboard people and their sessions, for a
// few owners held here: a right password opens a session (a random token, as the service issues), a
// wrong one is unauthorized, a token it never issued is unauthorized, and a sign-up form is accepted
// whatever its e-mail (the service mails the link, or tells a registered owner so: it never says which).

export interface FakeOwner {
  account: Account;
  user: User;
  password: string;
  /** Their member role (absent: the owner). */
  role?: string;
}

export function fakeOwner(email = `owner-${randomBytes(4).toString('hex')}@example.com`, plan = 'pro'): FakeOwner {
  const account = Account.fromPartial({
    id: newId('acct'),
    name: 'Acme Tools',
    plan,
    created_at: new Date().toISOString(),
    per_minute_limit: 0,
    per_hour_limit: 0,
  });
  const user = User.fromPartial({ id: newId('user'), account_id: account.id, email, created_at: account.created_at });
  return { account, user, password: 'correct horse battery staple' };
}

/**
 * SignIn, GetSession, EndSession, SignUp and the password calls over `owners`; `sessions` holds the
 * tokens issued, `resets` the reset links' tokens (each works once).
 */
export function sessionHandlers(
  owners: FakeOwner[],
  sessions = new Map<string, FakeOwner>(),
  resets = new Map<string, FakeOwner>(),
): FakeHandlers<typeof AccountServiceService> {
  const answer = (token: string, owner: FakeOwner, shownToken = '') =>
    SessionResponse.fromPartial({
      token: shownToken,
      csrf_token: `csrf_${token.slice(0, 16)}`,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      user: owner.user,
      account: owner.account,
      role: owner.role ?? 'owner',
    });
  return {
    signIn: ({ email, password }) => {
      const owner = owners.find((o) => o.user.email === email && o.password === password);
      if (!owner) throw new AppError('unauthorized', 'wrong e-mail or password');
      const token = randomBytes(32).toString('base64url');
      sessions.set(token, owner);
      return answer(token, owner, token);
    },
    getSession: ({ token }) => {
      const owner = sessions.get(token);
      if (!owner) throw new AppError('unauthorized', 'no such session');
      return answer(token, owner);
    },
    endSession: ({ token }) => {
      sessions.delete(token);
      return {};
    },
    requestPasswordReset: ({ email }) => {
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw AppError.invalid('email', 'email is not an e-mail address');
      return {};
    },
    resetPassword: ({ token, password }) => {
      checkPassword(password); // the service's own rule, before the link is used
      const owner = resets.get(token);
      resets.delete(token);
      if (!owner) throw AppError.invalid('token', 'this link has expired or was already used; ask for a new one');
      owner.password = password;
      for (const [t, o] of sessions) if (o === owner) sessions.delete(t);
      const fresh = randomBytes(32).toString('base64url');
      sessions.set(fresh, owner);
      return answer(fresh, owner, fresh);
    },
    changePassword: ({ token, current_password, new_password }) => {
      const owner = sessions.get(token);
      if (!owner) throw new AppError('unauthorized', 'the session has ended; sign in again');
      if (owner.password !== current_password) throw new AppError('unauthorized', 'the current password is wrong');
      checkPassword(new_password);
      owner.password = new_password;
      let ended = 0;
      for (const [t, o] of sessions)
        if (o === owner && t !== token) {
          sessions.delete(t);
          ended++;
        }
      return { ended_sessions: ended };
    },
    listSessions: ({ token }) => {
      const owner = sessions.get(token);
      if (!owner) throw new AppError('unauthorized', 'the session has ended; sign in again');
      return {
        data: [...sessions]
          .filter(([, o]) => o === owner)
          .map(([t]) => ({
            id: `ses_${t.slice(0, 8)}`,
            created_at: new Date().toISOString(),
            last_seen_at: new Date().toISOString(),
            ip: '127.0.0.1',
            user_agent: 'node',
            current: t === token,
          })),
      };
    },
    endOwnSession: ({ token, session_id }) => {
      const owner = sessions.get(token);
      const found = [...sessions].find(([t, o]) => o === owner && `ses_${t.slice(0, 8)}` === session_id);
      if (!owner || !found) throw AppError.notFound('session');
      sessions.delete(found[0]);
      return {};
    },
    signUp: ({ account_name, email, password }) => {
      if (!account_name.trim()) throw AppError.invalid('account_name', 'account name is required');
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw AppError.invalid('email', 'email is not an e-mail address');
      checkPassword(password); // the service's own rule
      return {};
    },
  };
}
