import { AppError, checkEmail, newId } from '@licensing/runtime';
import { checkAccountName } from '../domain/account';
import { checkPassword, hashPassword } from '../domain/password';
import {
  SIGNUP_LINK_TTL_MS,
  alreadyRegisteredMail,
  confirmationMail,
  digestSignupToken,
  isSignupToken,
  newSignupToken,
} from '../domain/signup';
import type { AccountDoc, UserDoc } from '../store/models';
import type { PeopleDeps } from './deps';
import { startSession, type OpenedSession } from './sessions';
import { ownerMember } from './members';
import { memberAction } from '../domain/members';

/** Only after the e-mailed link was used, which proves the address is the reader's. */
const ALREADY_REGISTERED = 'this e-mail already has an account; sign in instead';

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

/**
 * Mails a confirmation link for a new address, or a note pointing to sign-in
 * for a registered one: the answer is the same, so it never says which.
 */
export async function signUp(
  { people, mailer, clock, baseUrl }: PeopleDeps,
  req: { account_name: string; email: string; password: string },
): Promise<void> {
  if (!mailer) throw new AppError('forbidden', 'sign-up is closed on this server; ask its operator for an account');
  const name = checkAccountName(req.account_name);
  const email = checkEmail('email', req.email).toLowerCase();
  checkPassword(req.password);
  // Both cases hash the password and send one mail, so neither answers sooner.
  const passwordHash = await hashPassword(req.password);
  if (await people.findUserByEmail(email)) {
    await mailer.send(alreadyRegisteredMail(email, `${baseUrl}/dashboard/signin`));
    return;
  }
  const now = clock.now();
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
}

/** The e-mailed link: creates the account and its first user, and signs them in. A link works once. */
export async function confirmSignUp(deps: PeopleDeps, token: string): Promise<OpenedSession> {
  const { accounts, people, clock } = deps;
  const used = new AppError('invalid_request', 'this link has expired or was already used; sign up again', [
    { field: 'token', message: 'expired or already used' },
  ]);
  if (!isSignupToken(token)) throw used;
  const pending = await people.takePendingSignup(digestSignupToken(token));
  const now = clock.now();
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
  if (deps.members) {
    const owner = ownerMember(user);
    await deps.members.insert(owner, memberAction('member.joined', owner, now));
  }
  return startSession(deps, user, account);
}
