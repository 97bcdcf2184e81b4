import { AppError, checkEmail, newId } from '@licensing/runtime';
import {
  LINK_REFUSED,
  PORTAL_SESSION_TTL_MS,
  SEAT_RESCUE_WINDOW_MS,
  SESSION_GONE,
  checkAccountId,
  digestSecret,
  isReachable,
  isSecret,
  newSecret,
  normalEmail,
  portalRequestKey,
  rescueRequestKey,
  rescueWaitS,
  sameDigest,
} from '../domain/portal';
import { queuedMail, type EmailDoc } from '../store/emails';
import type { PortalSessionDoc } from '../store/portal';
import type { NotificationDeps } from './deps';

/**
 * Customer portal sign-in: queues the request, and that is all. Whether the address holds licences of
 * the account is decided by the sender (render-portal.ts), so the answer is the same, and as quick,
 * for every address; requests of one address within a minute are one (a duplicate is silently fine).
 */
export async function requestPortalLink(deps: NotificationDeps, accountId: string, email: string): Promise<void> {
  checkAccountId(accountId);
  const to = normalEmail('email', email);
  const now = deps.clock.now();
  const id = newId('eml', now.getTime());
  await deps.emails.record(
    queuedMail(
      'portal_link',
      { _id: id, request_key: portalRequestKey(accountId, to, now), account_id: accountId, to, license_key: '' },
      now,
    ),
  );
}

const rescueRefused = (last: EmailDoc, now: Date) =>
  AppError.rateLimited(
    'a seat rescue mail for this licence was sent within the last hour; ask again later',
    rescueWaitS(last.created_at, now),
  );

/**
 * Seat rescue: queues a mail to the licence's owner with a one-time link to its machines. One per
 * licence per hour: the rolling check refuses a later one, and the hour bucket's request key stops
 * a burst that passes the check together.
 */
export async function requestSeatRescue(deps: NotificationDeps, accountId: string, key: string): Promise<EmailDoc> {
  checkAccountId(accountId);
  if (!key || key.length > 200) throw AppError.invalid('key', 'key is required');
  // Scoped by account: another account's key is not found.
  const license = await deps.licenses.getLicense({ account_id: accountId, key });
  if (!isReachable(license.customer_email))
    throw new AppError('conflict', 'this licence has no customer e-mail: there is nobody to send a seat rescue to');
  const now = deps.clock.now();
  const last = await deps.emails.latestFor(
    accountId,
    license.key,
    'seat_rescue',
    new Date(now.getTime() - SEAT_RESCUE_WINDOW_MS),
  );
  if (last) throw rescueRefused(last, now);
  const doc = queuedMail(
    'seat_rescue',
    {
      _id: newId('eml', now.getTime()),
      request_key: rescueRequestKey(accountId, license.key, now),
      account_id: accountId,
      to: license.customer_email,
      license_key: license.key,
    },
    now,
  );
  if (await deps.emails.record(doc)) return doc;
  const first = await deps.emails.byRequestKey(accountId, doc.request_key);
  throw rescueRefused(first ?? doc, now);
}

export interface OpenedPortalSession {
  /** The raw token: only when the session is opened. */
  token: string;
  session: PortalSessionDoc;
}

/**
 * Redeems a sign-in link once. Unknown, used, expired and another account's links are refused alike.
 * Single use holds on FerretDB too: the gate is an insert into a unique index (markUsed), which lets
 * exactly one of two concurrent redeems through; an update "where not used" would let both.
 */
export async function redeemPortalLink(
  deps: NotificationDeps,
  accountId: string,
  token: string,
): Promise<OpenedPortalSession> {
  const refused = () => new AppError('invalid_request', LINK_REFUSED);
  if (!accountId || !isSecret(token)) throw refused();
  const now = deps.clock.now();
  const link = await deps.portal.linkByDigest(digestSecret(token));
  if (
    !link ||
    !sameDigest(link.token_digest, token) ||
    link.account_id !== accountId ||
    link.expires_at.getTime() <= now.getTime()
  )
    throw refused();
  if (!(await deps.portal.markUsed(link, now))) throw refused();
  const sessionToken = newSecret();
  const session: PortalSessionDoc = {
    _id: digestSecret(sessionToken),
    account_id: accountId,
    email: link.email,
    csrf_token: newSecret(),
    license_key: link.license_key,
    expires_at: new Date(now.getTime() + PORTAL_SESSION_TTL_MS),
    created_at: now,
  };
  await deps.portal.insertSession(session);
  // Used: it can never open another session (the mark says so); the link itself has no more use.
  await deps.portal.deleteLink(link._id);
  return { token: sessionToken, session };
}

/** The live session a cookie names; none, expired and another account's are the same refusal. */
export async function getPortalSession(
  deps: NotificationDeps,
  accountId: string,
  token: string,
): Promise<PortalSessionDoc> {
  const gone = () => new AppError('unauthorized', SESSION_GONE);
  if (!accountId || !isSecret(token)) throw gone();
  const session = await deps.portal.session(digestSecret(token));
  if (
    !session ||
    !sameDigest(session._id, token) ||
    session.account_id !== accountId ||
    session.expires_at.getTime() <= deps.clock.now().getTime()
  )
    throw gone();
  return session;
}

/** Signs out (idempotent: a token that names no session is already signed out). */
export async function endPortalSession(deps: NotificationDeps, accountId: string, token: string): Promise<void> {
  if (accountId && isSecret(token)) await deps.portal.endSession(accountId, digestSecret(token));
}

/**
 * Erases a customer from this service: their address in the account's mail log becomes the
 * placeholder, and their portal sessions and links go. Idempotent; how many documents changed.
 */
export async function eraseCustomer(
  deps: NotificationDeps,
  accountId: string,
  email: string,
  placeholder: string,
): Promise<number> {
  checkAccountId(accountId);
  const erased = normalEmail('email', email);
  // Kept as the gateway chose it: every service writes the same placeholder.
  const replacement = checkEmail('placeholder', placeholder);
  if (replacement.toLowerCase() === erased)
    throw AppError.invalid('placeholder', 'placeholder must differ from the e-mail');
  const [mails, portal] = await Promise.all([
    deps.emails.eraseCustomer(accountId, erased, replacement),
    deps.portal.eraseCustomer(accountId, erased),
  ]);
  return mails + portal;
}
