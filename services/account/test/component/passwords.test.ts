import { VISITOR_ACTOR_ID } from '@licensing/proto';
import { requestOrigin, withCallScope } from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';
import { mailsTo, waitForMail } from '../../../../test/support/mailbox';
import { type AccountClient, type RunningAccount, signUpPerson, startAccount } from './running-account';

// A forgotten password and a changed one, as the account service keeps them (real FerretDB, NATS and a
// mail folder): the link is mailed only to an address that signs in, works once within the hour, and
// its new password ends every session of the person; a change needs the current password and ends
// the other sessions; both are in the audit log, as the person's. The pages: web/test/component.

let svc: RunningAccount;
let web: AccountClient;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  svc = await startAccount();
  ({ web } = svc);
});

afterAll(async () => {
  await svc?.stop();
});

/** A person signed up through the e-mailed link, with the session it opened. */
const signedUp = () => signUpPerson(svc, PASSWORD, 'pw', 'Passwords Inc');

const resetToken = (text: string) => /\/dashboard\/password\/reset\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '';

describe('a forgotten password', () => {
  it('is reset by the mailed link once: the new password signs in, the old one and every session end', async () => {
    const { email, session } = await signedUp();
    const other = await web.call.signIn({ email, password: PASSWORD });
    await web.call.requestPasswordReset({ email: email.toUpperCase() });
    const mail = await waitForMail(svc.topology, email, 2);
    expect(mail.subject).toBe('Reset your password');
    const token = resetToken(mail.text);
    // A weak password is refused and leaves the link usable.
    await expect(web.call.resetPassword({ token, password: 'short' })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'password' }],
    });
    const fresh = await web.call.resetPassword({ token, password: 'a brand new passphrase' });
    expect(fresh.user?.email).toBe(email);
    expect(await web.call.getSession({ token: fresh.token })).toMatchObject({ user: { email } });
    for (const old of [session.token, other.token])
      await expect(web.call.getSession({ token: old })).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(web.call.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await web.call.signIn({ email, password: 'a brand new passphrase' })).token).toBeTruthy();
    // Used once.
    await expect(web.call.resetPassword({ token, password: 'another new passphrase' })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'token' }],
    });
    // In the audit log, as the person's.
    const entries = await eventually(async () => {
      const found = await svc.gateway.call.listAuditEvents({
        account_id: fresh.account!.id,
        page: { limit: 10, starting_after: '' },
        actor_id: '',
        event_type: 'password.reset',
        target_id: '',
        since: '',
        until: '',
      });
      expect(found.data).toHaveLength(1);
      return found.data;
    });
    expect(entries[0]).toMatchObject({
      actor: { type: 'member', id: fresh.user!.id, name: email },
      target: { type: 'user', id: fresh.user!.id },
    });
  });

  it('mails nothing to an address nobody signs in with, and answers it alike; a malformed one is 400', async () => {
    await web.call.requestPasswordReset({ email: 'nobody-here@example.com' });
    await expect(web.call.requestPasswordReset({ email: 'not an address' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    // The answer came before any mail would have: give a mail the time to arrive, then look.
    const { email } = await signedUp();
    await web.call.requestPasswordReset({ email });
    await waitForMail(svc.topology, email, 2);
    expect(await mailsTo(svc.topology, 'nobody-here@example.com')).toEqual([]);
  });

  it.each(['', 'x'.repeat(43), 'not-a-token'])('refuses a made-up link %j', async (token) => {
    await expect(web.call.resetPassword({ token, password: 'a brand new passphrase' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});

describe('changing a password', () => {
  it('needs the current password, and ends every other session but this one', async () => {
    const { email, session } = await signedUp();
    const other = await web.call.signIn({ email, password: PASSWORD });
    await expect(
      web.call.changePassword({
        token: session.token,
        current_password: 'wrong one!',
        new_password: 'fresh passphrase 1',
      }),
    ).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(
      web.call.changePassword({ token: session.token, current_password: PASSWORD, new_password: 'short' }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    const out = await web.call.changePassword({
      token: session.token,
      current_password: PASSWORD,
      new_password: 'fresh passphrase 1',
    });
    expect(out.ended_sessions).toBe(1);
    expect(await web.call.getSession({ token: session.token })).toMatchObject({ user: { email } });
    await expect(web.call.getSession({ token: other.token })).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await web.call.signIn({ email, password: 'fresh passphrase 1' })).token).toBeTruthy();
    await expect(
      web.call.changePassword({
        token: 'x'.repeat(43),
        current_password: PASSWORD,
        new_password: 'fresh passphrase 2',
      }),
    ).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

describe('signing in', () => {
  it("is in the audit log, failed or not, as the person's, with the address the dashboard saw", async () => {
    const { email, session } = await signedUp();
    const visitor = requestOrigin({ type: 'member', id: VISITOR_ACTOR_ID }, '198.51.100.9', 'Firefox/130');
    const asVisitor = <T>(fn: () => Promise<T>) =>
      withCallScope('req_signin', Number.POSITIVE_INFINITY, fn, undefined, visitor);
    await expect(asVisitor(() => web.call.signIn({ email, password: 'not the password' }))).rejects.toMatchObject({
      code: 'unauthorized',
    });
    await asVisitor(() => web.call.signIn({ email, password: PASSWORD }));
    // An address nobody signs in with belongs to no account: nothing to record, the same answer.
    await expect(
      asVisitor(() => web.call.signIn({ email: 'nobody@example.com', password: PASSWORD })),
    ).rejects.toMatchObject({
      code: 'unauthorized',
    });
    const entries = await eventually(async () => {
      const found = await svc.gateway.call.listAuditEvents({
        account_id: session.account!.id,
        page: { limit: 10, starting_after: '' },
        actor_id: session.user!.id,
        event_type: '',
        target_id: '',
        since: '',
        until: '',
      });
      expect(found.data.map((e) => e.event_type)).toEqual(['session.signed_in', 'session.sign_in_failed']);
      return found.data;
    });
    for (const e of entries)
      expect(e).toMatchObject({
        actor: { type: 'member', id: session.user!.id, name: email },
        target: { type: 'user', id: session.user!.id },
        ip: '198.51.100.9',
        user_agent: 'Firefox/130',
        request_id: 'req_signin',
      });
  });
});

describe('own sessions', () => {
  it('lists where the person is signed in (device, address, this one), and ends one of them; nobody else’s', async () => {
    const { email, session } = await signedUp();
    const laptop = requestOrigin({ type: 'member', id: VISITOR_ACTOR_ID }, '192.0.2.44', 'Laptop Browser/1.0');
    const other = await withCallScope(
      '',
      Number.POSITIVE_INFINITY,
      () => web.call.signIn({ email, password: PASSWORD }),
      undefined,
      laptop,
    );
    const listed = (await web.call.listSessions({ token: session.token })).data;
    expect(listed).toHaveLength(2);
    const mine = listed.find((x) => x.current)!;
    const theirs = listed.find((x) => !x.current)!;
    expect(theirs).toMatchObject({
      ip: '192.0.2.44',
      user_agent: 'Laptop Browser/1.0',
      id: expect.stringMatching(/^ses_/),
    });
    expect(JSON.stringify(listed)).not.toContain(other.token);
    // Someone else cannot end it, nor see it.
    const stranger = await signedUp();
    await expect(
      web.call.endOwnSession({ token: stranger.session.token, session_id: theirs.id }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await web.call.listSessions({ token: stranger.session.token })).data.map((x) => x.id)).not.toContain(
      theirs.id,
    );
    await web.call.endOwnSession({ token: session.token, session_id: theirs.id });
    await expect(web.call.getSession({ token: other.token })).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await web.call.listSessions({ token: session.token })).data.map((x) => x.id)).toEqual([mine.id]);
    await expect(web.call.endOwnSession({ token: session.token, session_id: theirs.id })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(web.call.listSessions({ token: 'z'.repeat(43) })).rejects.toMatchObject({ code: 'unauthorized' });
  });
});
