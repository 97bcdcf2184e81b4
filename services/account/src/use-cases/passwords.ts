import { AppError, checkEmail } from '@licensing/runtime';
import { checkPassword, hashPassword, verifyPassword } from '../domain/password';
import {
  PASSWORD_RESET_TTL_MS,
  digestResetToken,
  isResetToken,
  newResetToken,
  passwordAction,
  passwordResetMail,
} from '../domain/password-reset';
import type { PeopleDeps } from './deps';
import { signedInPerson, startSession, type OpenedSession } from './sessions';

/**
 * Forgot password: for an address someone signs in with, a one-time link (an hour) is mailed. The
 * answer is the same for any address and does not wait for the mail (its time says nothing either).
 */
export async function requestPasswordReset(deps: PeopleDeps, req: { email: string }): Promise<void> {
  const { people, mailer, clock, baseUrl, log } = deps;
  if (!mailer) throw new AppError('forbidden', 'this server sends no e-mail: ask its operator to reset your password');
  const email = checkEmail('email', req.email).toLowerCase();
  const user = await people.findUserByEmail(email);
  if (!user) return;
  const now = clock.now();
  const { token, digest } = newResetToken();
  await people.insertPasswordReset({
    _id: digest,
    user_id: user._id,
    created_at: now,
    expires_at: new Date(now.getTime() + PASSWORD_RESET_TTL_MS),
  });
  void mailer
    .send(passwordResetMail(email, `${baseUrl}/dashboard/password/reset?token=${token}`))
    .catch((err) => log?.warn({ err }, 'could not send a password reset mail'));
}

/** The link's new password: set, every session of the person ended, and a new one opened. */
export async function resetPassword(
  deps: PeopleDeps,
  req: { token: string; password: string },
): Promise<OpenedSession> {
  const { accounts, people, clock } = deps;
  const used = new AppError('invalid_request', 'this link has expired or was already used; ask for a new one', [
    { field: 'token', message: 'expired or already used' },
  ]);
  // The password is checked first: a weak one leaves the link usable for a better one.
  checkPassword(req.password);
  if (!isResetToken(req.token)) throw used;
  const reset = await people.takePasswordReset(digestResetToken(req.token));
  const now = clock.now();
  if (!reset || reset.expires_at.getTime() <= now.getTime()) throw used;
  const user = await people.findUser(reset.user_id);
  const account = user && (await accounts.findAccount(user.account_id));
  if (!user || !account) throw used;
  await people.setPassword(user._id, await hashPassword(req.password), passwordAction('password.reset', user, now));
  deps.outbox?.flush(people.models.User, user._id);
  await people.endSessionsOf(user._id, now);
  return startSession(deps, { ...user }, account);
}

/** Signed in: the current password and a new one; the person's other sessions end. How many did. */
export async function changePassword(
  deps: PeopleDeps,
  req: { token: string; current_password: string; new_password: string },
): Promise<number> {
  const { people, clock } = deps;
  const { digest, user } = await signedInPerson(deps, req.token);
  const now = clock.now();
  if (!(await verifyPassword(req.current_password.slice(0, 200), user.password_hash)))
    throw new AppError('unauthorized', 'the current password is wrong', [
      { field: 'current_password', message: 'is wrong' },
    ]);
  checkPassword(req.new_password);
  await people.setPassword(
    user._id,
    await hashPassword(req.new_password),
    passwordAction('password.changed', user, now),
  );
  deps.outbox?.flush(people.models.User, user._id);
  return people.endSessionsOf(user._id, now, digest);
}
