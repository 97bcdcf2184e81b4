import { AppError, currentCall } from '@licensing/runtime';
import { EMAIL_MAX_LENGTH } from '@licensing/proto';
import { UNKNOWN_USER_HASH, verifyPassword } from '../domain/password';
import {
  CODE_STAGE_TTL_MS,
  SESSION_TTL_MS,
  digestSessionToken,
  isSessionToken,
  newSessionSecrets,
  sessionIsLive,
} from '../domain/session';
import type { AccountDoc, UserDoc } from '../store/models';
import type { PeopleDeps } from './deps';
import { personAction } from '../domain/person-action';

const WRONG_CREDENTIALS = 'wrong e-mail or password';

/** A dashboard session: the token only when it is opened (the cookie), '' when it is read again. */
export interface OpenedSession {
  token: string;
  csrfToken: string;
  expiresAt: Date;
  user: UserDoc;
  account: AccountDoc;
  /** The person's member role: what the dashboard lets them do. */
  role: string;
  /** 'code': the password was right, the second factor is awaited (the token opens only the code form). */
  stage?: 'code';
  /** The account requires two-factor sign-in and this person has none yet: the dashboard sends them to enrol. */
  mustEnrolMfa?: boolean;
}

/** A person's member role (owner for a login without a member: none existed before members). */
async function roleOf(deps: Pick<PeopleDeps, 'members'>, userId: string): Promise<string> {
  return (await deps.members?.byUser(userId))?.role ?? 'owner';
}

/**
 * The session a person gets once they proved who they are with a password (a sign-in, a reset link, an
 * invitation, a sign-up): the code form's first when they have two-factor sign-in, else a full one,
 * sent to enrolment when their account requires it.
 */
export function startSession(deps: PeopleDeps, user: UserDoc, account: AccountDoc): Promise<OpenedSession> {
  if (user.mfa) return openSession(deps, user, account, { stage: 'code' });
  return openSession(deps, user, account, { mustEnrolMfa: account.require_mfa === true });
}

export async function openSession(
  { people, clock, members }: Pick<PeopleDeps, 'people' | 'clock' | 'members'>,
  user: UserDoc,
  account: AccountDoc,
  opts: { stage?: 'code'; mustEnrolMfa?: boolean } = {},
): Promise<OpenedSession> {
  const now = clock.now();
  const { token, digest, csrfToken } = newSessionSecrets();
  const expires = new Date(now.getTime() + (opts.stage ? CODE_STAGE_TTL_MS : SESSION_TTL_MS));
  // Where it is opened from, as the dashboard saw the request (the person's sessions list shows it).
  const origin = currentCall()?.origin;
  await people.insertSession({
    _id: digest,
    user_id: user._id,
    account_id: account._id,
    csrf_token: csrfToken,
    created_at: now,
    expires_at: expires,
    ended_at: null,
    last_seen_at: now,
    ...(origin?.ip ? { ip: origin.ip } : {}),
    ...(origin?.user_agent ? { user_agent: origin.user_agent } : {}),
    ...(opts.stage ? { stage: opts.stage, code_failures: 0 } : {}),
    ...(opts.mustEnrolMfa ? { must_enrol_mfa: true } : {}),
  });
  const role = await roleOf({ members }, user._id);
  return { token, csrfToken, expiresAt: expires, user, account, role, ...opts };
}

/** A new session for the right e-mail and password; both failures answer alike, and take as long. */
export async function signIn(deps: PeopleDeps, req: { email: string; password: string }): Promise<OpenedSession> {
  const { accounts, people } = deps;
  const email = req.email.trim().toLowerCase();
  const user = email && email.length <= EMAIL_MAX_LENGTH ? await people.findUserByEmail(email) : null;
  // Verify against a dummy hash for unknown e-mails: both failures take the same time.
  const ok = await verifyPassword(req.password.slice(0, 200), user?.password_hash ?? UNKNOWN_USER_HASH);
  // With a second factor, the sign-in is recorded once its code is given (use-cases/mfa.ts).
  if (user && !(ok && user.mfa)) await recordSignIn(deps, user, ok ? 'session.signed_in' : 'session.sign_in_failed');
  if (!user || !ok) throw new AppError('unauthorized', WRONG_CREDENTIALS);
  const account = await accounts.findAccount(user.account_id);
  if (!account) throw new AppError('unauthorized', WRONG_CREDENTIALS);
  return startSession(deps, user, account);
}

/**
 * A sign-in of a known address, in the audit log (an unknown one belongs to no account). Recording
 * never fails the sign-in: a store that refuses it is logged, and the sign-in goes on.
 */
export async function recordSignIn(
  deps: PeopleDeps,
  user: UserDoc,
  type: 'session.signed_in' | 'session.sign_in_failed',
): Promise<void> {
  try {
    await deps.people.recordAction(user._id, personAction(type, user, deps.clock.now()));
    deps.outbox?.flush(deps.people.models.User, user._id);
  } catch (err) {
    deps.log?.warn({ err }, 'could not record a sign-in in the audit log');
  }
}

/** What a token that names no full session is told. */
export const sessionEnded = () => new AppError('unauthorized', 'the session has ended; sign in again');

/** The full session a cookie's token names, still live now (unauthorized for anything else). */
async function liveSession({ people, clock }: Pick<PeopleDeps, 'people' | 'clock'>, token: string) {
  if (!isSessionToken(token)) throw sessionEnded();
  const digest = digestSessionToken(token);
  const session = await people.findSession(digest);
  const now = clock.now();
  if (!session || !sessionIsLive(session, now)) throw sessionEnded();
  return { digest, session, now };
}

/** The full session of a cookie's token and its person (unauthorized for anything else). */
export async function signedInPerson(deps: Pick<PeopleDeps, 'people' | 'clock'>, token: string) {
  const { digest, session } = await liveSession(deps, token);
  const user = await deps.people.findUser(session.user_id);
  if (!user) throw sessionEnded();
  return { digest, session, user };
}

/** The live session of a cookie's token, with its user and account. */
export async function getSession(deps: PeopleDeps, token: string): Promise<OpenedSession> {
  const { accounts, people, members } = deps;
  const { session, now } = await liveSession(deps, token);
  // Last seen, to the minute: one write a minute per session at most.
  if (!session.last_seen_at || now.getTime() - session.last_seen_at.getTime() >= LAST_SEEN_STEP_MS)
    await people.touchSession(session._id, now);
  const [user, account, role] = await Promise.all([
    people.findUser(session.user_id),
    accounts.findAccount(session.account_id),
    roleOf({ members }, session.user_id),
  ]);
  if (!user || !account) throw sessionEnded();
  return {
    token: '',
    csrfToken: session.csrf_token,
    expiresAt: session.expires_at,
    user,
    account,
    role,
    ...(session.must_enrol_mfa && !user.mfa ? { mustEnrolMfa: true } : {}),
  };
}

/** How often a session's last use is written (a page a second must not write a second). */
const LAST_SEEN_STEP_MS = 60_000;

/** A session's public id: the start of its digest (never the token, never the whole digest). */
export const publicSessionId = (digest: string) => `ses_${digest.slice(0, 20)}`;

/** The signed-in person's live sessions, the most recently used first, the current one marked. */
export async function listSessions(deps: PeopleDeps, token: string) {
  const { current, sessions } = await ownSessions(deps, token);
  return sessions
    .sort((a, b) => (b.last_seen_at ?? b.created_at).getTime() - (a.last_seen_at ?? a.created_at).getTime())
    .map((s) => ({
      id: publicSessionId(s._id),
      created_at: s.created_at.toISOString(),
      last_seen_at: (s.last_seen_at ?? s.created_at).toISOString(),
      ip: s.ip ?? '',
      user_agent: s.user_agent ?? '',
      current: s._id === current,
    }));
}

/** Ends one of the signed-in person's sessions by its public id; not_found for anything else. */
export async function endOwnSession(deps: PeopleDeps, req: { token: string; session_id: string }): Promise<void> {
  const { sessions } = await ownSessions(deps, req.token);
  const found = sessions.find((s) => publicSessionId(s._id) === req.session_id);
  if (!found) throw AppError.notFound('session');
  await deps.people.endSession(found._id, deps.clock.now());
}

async function ownSessions(deps: PeopleDeps, token: string) {
  const { digest: current, session, now } = await liveSession(deps, token);
  const sessions = (await deps.people.sessionsOf(session.user_id)).filter((s) => sessionIsLive(s, now));
  return { current, sessions };
}

/** Signs out: ends the session of a well-formed token (anything else is already no session). */
export async function endSession({ people, clock }: PeopleDeps, token: string): Promise<void> {
  if (isSessionToken(token)) await people.endSession(digestSessionToken(token), clock.now());
}
