import { AppError, type Keyring } from '@licensing/runtime';
import { verifyPassword } from '../domain/password';
import { personAction } from '../domain/person-action';
import { MAX_CODE_FAILURES, codeStageIsLive, digestSessionToken, isSessionToken } from '../domain/session';
import {
  cleanCode,
  cleanRecoveryCode,
  digestRecoveryCode,
  matchTotp,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
} from '../domain/totp';
import type { UserDoc } from '../store/models';
import type { PeopleDeps } from './deps';
import { openSession, recordSignIn, sessionEnded, signedInPerson, type OpenedSession } from './sessions';

// Two-factor sign-in: enrolling (a secret shown once as a QR code and as text, confirmed by one code,
// then ten recovery codes shown once), the sign-in's second step, and turning it off. Every call names
// the dashboard session (its cookie's token) it is made in, as a password change does.

/** An enrolment's secret is good for this long before its first code (then enrolment starts again). */
const ENROLMENT_TTL_MS = 60 * 60 * 1000;

function keyringOf(deps: PeopleDeps): Keyring {
  if (!deps.mfaKeyring) throw new AppError('service_unavailable', 'two-factor sign-in is not configured');
  return deps.mfaKeyring;
}

/** The signed-in person of a full session's token. */
const signedInUser = async (deps: PeopleDeps, token: string): Promise<UserDoc> =>
  (await signedInPerson(deps, token)).user;

/** A new secret for the person's authenticator app; what they scan or type, and nothing is on yet. */
export async function beginMfaEnrolment(
  deps: PeopleDeps,
  req: { token: string },
): Promise<{ secret: string; otpauth_uri: string }> {
  const keyring = keyringOf(deps);
  const user = await signedInUser(deps, req.token);
  if (user.mfa) throw new AppError('conflict', 'two-factor sign-in is already on; turn it off first to enrol again');
  const account = await deps.accounts.findAccount(user.account_id);
  if (!account) throw sessionEnded();
  const secret = newTotpSecret();
  await deps.people.startMfaEnrolment(user._id, keyring.seal(Buffer.from(secret)), deps.clock.now());
  return { secret, otpauth_uri: otpauthUri(account.name, user.email, secret) };
}

/** The first code from the app turns two-factor sign-in on: the ten recovery codes, shown this once. */
export async function confirmMfaEnrolment(
  deps: PeopleDeps,
  req: { token: string; code: string },
): Promise<{ recovery_codes: string[] }> {
  const keyring = keyringOf(deps);
  const user = await signedInUser(deps, req.token);
  const now = deps.clock.now();
  if (user.mfa) throw new AppError('conflict', 'two-factor sign-in is already on');
  const pending = user.mfa_enrolment;
  if (!pending || now.getTime() - new Date(pending.created_at).getTime() > ENROLMENT_TTL_MS)
    throw new AppError('invalid_request', 'start the enrolment again: its secret has expired or was never shown', [
      { field: 'code', message: 'no enrolment is waiting for a code' },
    ]);
  if (!cleanCode(req.code))
    throw new AppError('invalid_request', 'a code is the 6 digits your authenticator app shows', [
      { field: 'code', message: 'must be 6 digits' },
    ]);
  const step = matchTotp(keyring.open(pending.secret).toString(), req.code, now);
  if (step === null)
    throw new AppError('invalid_request', 'that code is wrong: check the app shows this account, and its clock', [
      { field: 'code', message: 'is wrong' },
    ]);
  const codes = newRecoveryCodes();
  await deps.people.enableMfa(
    user._id,
    {
      secret: pending.secret,
      enabled_at: now,
      last_step: step,
      recovery: codes.map((c) => digestRecoveryCode(cleanRecoveryCode(c)!)),
    },
    personAction('mfa.enabled', user, now),
  );
  deps.outbox?.flush(deps.people.models.User, user._id);
  await deps.people.clearMustEnrol(user._id);
  return { recovery_codes: codes };
}

/** Turns two-factor sign-in off (the current password required); refused while the account requires it. */
export async function disableMfa(deps: PeopleDeps, req: { token: string; password: string }): Promise<void> {
  const user = await signedInUser(deps, req.token);
  if (!user.mfa) throw new AppError('conflict', 'two-factor sign-in is not on');
  const account = await deps.accounts.findAccount(user.account_id);
  if (account?.require_mfa)
    throw new AppError(
      'forbidden',
      'your account requires two-factor sign-in for every member: an owner or admin can change that in Settings',
    );
  if (!(await verifyPassword(req.password.slice(0, 200), user.password_hash)))
    throw new AppError('unauthorized', 'the password is wrong', [{ field: 'password', message: 'is wrong' }]);
  const now = deps.clock.now();
  await deps.people.disableMfa(user._id, personAction('mfa.disabled', user, now));
  deps.outbox?.flush(deps.people.models.User, user._id);
}

/**
 * The sign-in's second step: a code from the app (each step's code once) or a recovery code (each
 * once). Right: the waiting session ends and a full one opens (a new token). Wrong: counted, and after
 * MAX_CODE_FAILURES the sign-in starts over from the password (which its own throttle guards).
 */
export async function completeSignIn(deps: PeopleDeps, req: { token: string; code: string }): Promise<OpenedSession> {
  const { people, clock } = deps;
  const expired = () => new AppError('unauthorized', 'this sign-in has expired; enter your e-mail and password again');
  if (!isSessionToken(req.token)) throw expired();
  const digest = digestSessionToken(req.token);
  const waiting = await people.findSession(digest);
  const now = clock.now();
  if (!waiting || !codeStageIsLive(waiting, now)) throw expired();
  const [user, account] = await Promise.all([
    people.findUser(waiting.user_id),
    deps.accounts.findAccount(waiting.account_id),
  ]);
  if (!user?.mfa || !account) throw expired();
  const verdict = await checkSecondFactor(deps, user, req.code, now);
  if (verdict !== 'ok') {
    await recordSignIn(deps, user, 'session.sign_in_failed');
    if ((await people.countCodeFailure(digest)) >= MAX_CODE_FAILURES) {
      await people.endSession(digest, now);
      throw new AppError('unauthorized', 'too many wrong codes; enter your e-mail and password again');
    }
    const message =
      verdict === 'reused'
        ? 'that code was used already: wait for the next one your app shows'
        : 'that code is wrong (or a recovery code already used)';
    throw new AppError('unauthorized', message, [
      { field: 'code', message: verdict === 'reused' ? 'already used' : 'is wrong' },
    ]);
  }
  await people.endSession(digest, now);
  await recordSignIn(deps, user, 'session.signed_in');
  return openSession(deps, user, account);
}

async function checkSecondFactor(
  deps: PeopleDeps,
  user: UserDoc,
  code: string,
  now: Date,
): Promise<'ok' | 'wrong' | 'reused'> {
  const mfa = user.mfa!;
  if (cleanCode(code)) {
    const step = matchTotp(keyringOf(deps).open(mfa.secret).toString(), code, now);
    if (step === null) return 'wrong';
    // The store's compare-and-set decides between two sign-ins racing with the same code.
    return step > mfa.last_step && (await deps.people.takeTotpStep(user._id, step)) ? 'ok' : 'reused';
  }
  const recovery = cleanRecoveryCode(code);
  if (!recovery) return 'wrong';
  return (await deps.people.takeRecoveryCode(user._id, digestRecoveryCode(recovery))) ? 'ok' : 'wrong';
}

/** Whether the person has two-factor sign-in on, and how many recovery codes are left. */
export async function mfaStatus(
  deps: PeopleDeps,
  req: { token: string },
): Promise<{ enabled: boolean; recovery_codes_left: number; required: boolean }> {
  const user = await signedInUser(deps, req.token);
  const account = await deps.accounts.findAccount(user.account_id);
  return {
    enabled: !!user.mfa,
    recovery_codes_left: user.mfa?.recovery.length ?? 0,
    required: account?.require_mfa === true,
  };
}
