import type { Clock, Keyring, Logger, Outbox } from '@licensing/runtime';
import type { Peppers } from '../domain/api-key';
import type { Mailer } from '../mail/mailer';
import type { AccountStore, PeopleStore } from '../store/queries';
import type { MemberStore } from '../store/members';

/** What the account and API key use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface AccountDeps {
  store: AccountStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
  /** API_KEY_PEPPER: the server secrets of the keys' HMAC digests, the current one for new keys. */
  pepper: Peppers;
  log: Pick<Logger, 'warn'>;
}

/** What sign-up, sign-in and dashboard sessions work with. */
export interface PeopleDeps {
  accounts: AccountStore;
  people: PeopleStore;
  /** Undefined when MAIL_URL is empty: sign-up is then closed. */
  mailer: Mailer | undefined;
  clock: Clock;
  /** PUBLIC_BASE_URL without a trailing slash, for the links in e-mails. */
  baseUrl: string;
  /** Where a mail sent after the answer reports that it failed. */
  log?: Pick<Logger, 'warn'>;
  /** Publishes at once the account actions a write recorded (the relay retries what this misses). */
  outbox?: Pick<Outbox, 'flush'>;
  /** The members: a sign-up makes its owner one (absent in the unit tests of sign-up and sessions). */
  members?: MemberStore;
  /** Seals the TOTP secrets of two-factor sign-in (domain/mfa-keyring.ts; absent in unit tests without it). */
  mfaKeyring?: Keyring;
}
