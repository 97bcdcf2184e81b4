import { SESSION_TTL_MS, digestSessionToken } from '../../src/domain/session';
import { SIGNUP_LINK_TTL_MS } from '../../src/domain/signup';
import { createAccount } from '../../src/use-cases/accounts';
import { createApiKey, revokeApiKey } from '../../src/use-cases/api-keys';
import { listAuditEntries } from '../../src/use-cases/audit';
import { endSession, getSession, signIn } from '../../src/use-cases/sessions';
import { confirmSignUp, signUp } from '../../src/use-cases/sign-up';
import { accountSetup } from '../../../../test/support/fakes/account-deps';
import { refusal } from '../../../../test/support/fakes/common';

const PASSWORD = 'correct horse battery';
const form = (over = {}) => ({ account_name: 'Acme', email: 'Ana@Example.com', password: PASSWORD, ...over });

/** The token in the last confirmation link mailed. */
const linkToken = (text: string) => /token=([A-Za-z0-9_-]{43})/.exec(text)?.[1] ?? '';

async function signedUp() {
  const s = accountSetup();
  await signUp(s.peopleDeps, form());
  const session = await confirmSignUp(s.peopleDeps, linkToken(s.mailer.sent[0].text));
  return { ...s, session };
}

describe('signing up', () => {
  it('stores nothing but a pending sign-up, and mails a link to confirm it', async () => {
    const { people, store, mailer, clock, peopleDeps } = accountSetup();
    await signUp(peopleDeps, form());
    expect(store.accounts.size).toBe(0);
    expect(people.users.size).toBe(0);
    const [pending] = [...people.pending.values()];
    expect(pending).toMatchObject({
      email: 'ana@example.com',
      account_name: 'Acme',
      expires_at: new Date(clock.now().getTime() + SIGNUP_LINK_TTL_MS),
    });
    expect(pending.password_hash).toMatch(/^scrypt\$/);
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0].to).toBe('ana@example.com');
    expect(mailer.sent[0].text).toContain('https://licensing.example/dashboard/signup/confirm?token=');
  });

  it('mails a registered address a pointer to sign-in instead, storing nothing', async () => {
    const { people, mailer, peopleDeps } = await signedUp();
    await signUp(peopleDeps, form({ account_name: 'Again' }));
    expect(people.pending.size).toBe(0);
    expect(mailer.sent.at(-1)).toMatchObject({ to: 'ana@example.com', subject: 'You already have an account' });
    expect(mailer.sent.at(-1)!.text).toContain('https://licensing.example/dashboard/signin');
  });

  it('is closed without a mailer', async () => {
    const { people, peopleDeps } = accountSetup();
    const err = await refusal(() => signUp({ ...peopleDeps, mailer: undefined }, form()));
    expect(err.code).toBe('forbidden');
    expect(people.pending.size).toBe(0);
  });

  it.each([
    ['an empty account name', { account_name: ' ' }, 'name'],
    ['a malformed e-mail', { email: 'ana' }, 'email'],
    ['a short password', { password: 'short' }, 'password'],
    ['a common password', { password: 'password123' }, 'password'],
  ])('refuses %s, mailing nothing', async (_what, over, field) => {
    const { people, mailer, peopleDeps } = accountSetup();
    const err = await refusal(() => signUp(peopleDeps, form(over)));
    expect(err.fieldErrors.map((f) => f.field)).toEqual([field]);
    expect(mailer.sent).toEqual([]);
    expect(people.pending.size).toBe(0);
  });
});

describe('confirming a sign-up', () => {
  it('creates the free account and its user, and opens a session', async () => {
    const { store, people, clock, session } = await signedUp();
    expect(session.account).toMatchObject({ name: 'Acme', plan: 'free' });
    expect(session.user).toMatchObject({ account_id: session.account._id, email: 'ana@example.com' });
    expect(store.accounts.has(session.account._id)).toBe(true);
    expect(people.users.has(session.user._id)).toBe(true);
    expect(session.expiresAt).toEqual(new Date(clock.now().getTime() + SESSION_TTL_MS));
    expect(people.sessions.get(digestSessionToken(session.token))).toMatchObject({
      user_id: session.user._id,
      csrf_token: session.csrfToken,
      ended_at: null,
    });
  });

  it('works once: the same link again is refused', async () => {
    const { mailer, peopleDeps } = await signedUp();
    const err = await refusal(() => confirmSignUp(peopleDeps, linkToken(mailer.sent[0].text)));
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['token']);
  });

  it('refuses a link past its 24 hours, and a token of the wrong shape', async () => {
    const { store, mailer, clock, peopleDeps } = accountSetup();
    await signUp(peopleDeps, form());
    clock.advance(SIGNUP_LINK_TTL_MS);
    expect((await refusal(() => confirmSignUp(peopleDeps, linkToken(mailer.sent[0].text)))).code).toBe(
      'invalid_request',
    );
    expect((await refusal(() => confirmSignUp(peopleDeps, 'short'))).code).toBe('invalid_request');
    expect(store.accounts.size).toBe(0);
  });

  it('says the e-mail is taken when another sign-up of it was confirmed first', async () => {
    const { store, mailer, peopleDeps } = accountSetup();
    await signUp(peopleDeps, form());
    await signUp(peopleDeps, form({ account_name: 'Second' }));
    await confirmSignUp(peopleDeps, linkToken(mailer.sent[0].text));
    const err = await refusal(() => confirmSignUp(peopleDeps, linkToken(mailer.sent[1].text)));
    expect(err).toMatchObject({ code: 'conflict', message: 'this e-mail already has an account; sign in instead' });
    expect(store.accounts.size).toBe(1);
  });

  it('removes the account again when its user loses a race for the e-mail (nothing half-written)', async () => {
    const { store, people, mailer, peopleDeps } = accountSetup();
    await signUp(peopleDeps, form());
    people.userRace = true;
    const err = await refusal(() => confirmSignUp(peopleDeps, linkToken(mailer.sent[0].text)));
    expect(err.code).toBe('conflict');
    expect(store.accounts.size).toBe(0);
    expect(people.sessions.size).toBe(0);
  });
});

describe('signing in and sessions', () => {
  it('opens a session for the right e-mail (in any case) and password', async () => {
    const { people, peopleDeps, session } = await signedUp();
    const again = await signIn(peopleDeps, { email: ' ANA@example.com ', password: PASSWORD });
    expect(again.user._id).toBe(session.user._id);
    expect(again.token).not.toBe(session.token);
    expect(people.sessions.size).toBe(2);
  });

  it.each([
    ['a wrong password', { email: 'ana@example.com', password: 'wrong horse battery' }],
    ['an unknown e-mail', { email: 'bob@example.com', password: PASSWORD }],
  ])('refuses %s with the same answer', async (_what, req) => {
    const { people, peopleDeps } = await signedUp();
    expect(await refusal(() => signIn(peopleDeps, req))).toMatchObject({
      code: 'unauthorized',
      message: 'wrong e-mail or password',
    });
    expect(people.sessions.size).toBe(1);
  });

  it('reads a live session back without its token', async () => {
    const { peopleDeps, session } = await signedUp();
    const read = await getSession(peopleDeps, session.token);
    expect(read).toMatchObject({ token: '', csrfToken: session.csrfToken, expiresAt: session.expiresAt });
    expect(read.account._id).toBe(session.account._id);
  });

  it('ends a session at sign-out, and after 12 hours', async () => {
    const { clock, peopleDeps, session } = await signedUp();
    const other = await signIn(peopleDeps, { email: 'ana@example.com', password: PASSWORD });
    await endSession(peopleDeps, session.token);
    expect((await refusal(() => getSession(peopleDeps, session.token))).code).toBe('unauthorized');
    clock.advance(SESSION_TTL_MS - 1);
    await expect(getSession(peopleDeps, other.token)).resolves.toBeTruthy();
    clock.advance(1);
    expect((await refusal(() => getSession(peopleDeps, other.token))).code).toBe('unauthorized');
  });

  it('refuses a token of the wrong shape without a look-up, and ignores it at sign-out', async () => {
    const { people, peopleDeps } = await signedUp();
    people.findSession = async () => {
      throw new Error('looked up');
    };
    expect((await refusal(() => getSession(peopleDeps, 'nope'))).code).toBe('unauthorized');
    await expect(endSession(peopleDeps, 'nope')).resolves.toBeUndefined();
  });
});

describe('the audit trail', () => {
  it('lists key creations and revocations of the account, newest first, with their actors', async () => {
    const { deps, peopleDeps, clock } = accountSetup();
    const { account, key } = await createAccount(deps, { name: 'Acme', plan: 'free' });
    await createAccount(deps, { name: 'Other', plan: 'free' });
    clock.advance(1000);
    await createApiKey(deps, { account_id: account._id, scope: 'validate', name: 'app', actor: 'ana@example.com' });
    clock.advance(1000);
    await revokeApiKey(deps, { account_id: account._id, key_id: key._id, actor: 'ana@example.com' });
    const entries = await listAuditEntries(peopleDeps, account._id, 0);
    expect(entries.map((e) => [e.type, e.actor, e.key_name])).toEqual([
      ['api_key.revoked', 'ana@example.com', 'default'],
      ['api_key.created', 'ana@example.com', 'app'],
      ['api_key.created', 'operator', 'default'],
    ]);
    expect(await listAuditEntries(peopleDeps, account._id, 1)).toHaveLength(1);
  });
});
