import { runServiceJob } from '@licensing/runtime';
import { envFor } from '../../../../scripts/lib/topology';
import { accountService } from '../../src/main';
import { totpCode, base32Decode, stepAt } from '../../src/domain/totp';
import { eventually } from '../../../../test/support/eventually';
import { waitForMail } from '../../../../test/support/mailbox';
import { type AccountClient, type RunningAccount, signUpPerson, startAccount } from './running-account';

// Two-factor sign-in as the account service keeps it (real FerretDB, NATS and a mail folder): enrolling
// takes one right code and answers ten recovery codes once; a sign-in then waits for a code, each
// step's code works once, each recovery code once, and five wrong codes start the sign-in over; an
// account that requires it sends members without it to enrolment and keeps it on; every step is in
// the audit log with its actor. The pages: web/test/component/two-factor-pages.test.ts.

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

async function signedUp() {
  const { email, session } = await signUpPerson(svc, PASSWORD, 'mfa', 'Two Factor Inc');
  return { email, session, accountId: session.account!.id, userId: session.user!.id };
}

/** The authenticator app: the code of the current step, or of the one after (still accepted). */
const codeOf = (secret: string, ahead = 0) => totpCode(base32Decode(secret)!, stepAt(new Date()) + ahead);
/** The code of one step (a test names steps relative to the one it enrolled in, whenever it runs). */
const codeAt = (secret: string, step: number) => totpCode(base32Decode(secret)!, step);

/** A person with two-factor sign-in on: their secret, recovery codes, and the step their enrolment's code used. */
async function enrolled() {
  const person = await signedUp();
  const { secret, otpauth_uri } = await web.call.beginMfaEnrolment({ token: person.session.token });
  expect(otpauth_uri).toContain(`secret=${secret}`);
  const step = stepAt(new Date());
  const code = codeAt(secret, step);
  const { recovery_codes } = await web.call.confirmMfaEnrolment({ token: person.session.token, code });
  return { ...person, secret, step, recovery: recovery_codes };
}

const auditOf = (accountId: string, type: string) =>
  svc.gateway.call.listAuditEvents({
    account_id: accountId,
    page: { limit: 50, starting_after: '' },
    actor_id: '',
    event_type: type,
    target_id: '',
    since: '',
    until: '',
  });

describe('enrolling', () => {
  it('takes one right code, answers ten recovery codes once, and is in the audit log as the person', async () => {
    const { session, accountId, userId, email } = await signedUp();
    const token = session.token;
    expect(await web.call.getMfaStatus({ token })).toEqual({ enabled: false, recovery_codes_left: 0, required: false });
    // No code before a secret was shown.
    await expect(web.call.confirmMfaEnrolment({ token, code: '123456' })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'code' }],
    });
    const { secret } = await web.call.beginMfaEnrolment({ token });
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const wrong = String((Number(codeOf(secret)) + 1) % 1_000_000).padStart(6, '0');
    for (const code of [wrong, 'abc', ''])
      await expect(web.call.confirmMfaEnrolment({ token, code })).rejects.toMatchObject({
        code: 'invalid_request',
        fieldErrors: [{ field: 'code' }],
      });
    expect((await web.call.getMfaStatus({ token })).enabled).toBe(false);
    const { recovery_codes } = await web.call.confirmMfaEnrolment({ token, code: codeOf(secret) });
    expect(recovery_codes).toHaveLength(10);
    expect(await web.call.getMfaStatus({ token })).toEqual({ enabled: true, recovery_codes_left: 10, required: false });
    // Enrolling again needs turning it off first.
    await expect(web.call.beginMfaEnrolment({ token })).rejects.toMatchObject({ code: 'conflict' });
    const entries = await eventually(async () => {
      const found = (await auditOf(accountId, 'mfa.enabled')).data;
      expect(found).toHaveLength(1);
      return found;
    });
    expect(entries[0]).toMatchObject({
      actor: { type: 'member', id: userId, name: email },
      target: { type: 'user', id: userId },
    });
  });
});

describe('signing in with a second factor', () => {
  it('waits for a code: the waiting token opens nothing else, each step works once, a wrong code is refused', async () => {
    const { email, secret, step, accountId } = await enrolled();
    const waiting = await web.call.signIn({ email, password: PASSWORD });
    expect(waiting.code_required).toBe(true);
    for (const call of [
      () => web.call.getSession({ token: waiting.token }),
      () => web.call.listSessions({ token: waiting.token }),
      () => web.call.beginMfaEnrolment({ token: waiting.token }),
      () => web.call.changePassword({ token: waiting.token, current_password: PASSWORD, new_password: 'x'.repeat(12) }),
    ])
      await expect(call()).rejects.toMatchObject({ code: 'unauthorized' });
    const wrong = String((Number(codeOf(secret)) + 1) % 1_000_000).padStart(6, '0');
    await expect(web.call.completeSignIn({ token: waiting.token, code: wrong })).rejects.toMatchObject({
      code: 'unauthorized',
      fieldErrors: [{ field: 'code', message: 'is wrong' }],
    });
    // The enrolment's step: used already.
    await expect(web.call.completeSignIn({ token: waiting.token, code: codeAt(secret, step) })).rejects.toMatchObject({
      code: 'unauthorized',
      fieldErrors: [{ field: 'code', message: 'already used' }],
    });
    const full = await web.call.completeSignIn({ token: waiting.token, code: codeAt(secret, step + 1) });
    expect(full.token).not.toBe(waiting.token);
    expect(full.code_required).toBe(false);
    expect((await web.call.getSession({ token: full.token })).user?.email).toBe(email);
    // The waiting token was used up, and so was that step.
    await expect(
      web.call.completeSignIn({ token: waiting.token, code: codeAt(secret, step + 1) }),
    ).rejects.toMatchObject({
      code: 'unauthorized',
    });
    const again = await web.call.signIn({ email, password: PASSWORD });
    await expect(web.call.completeSignIn({ token: again.token, code: codeAt(secret, step + 1) })).rejects.toMatchObject(
      {
        fieldErrors: [{ field: 'code', message: 'already used' }],
      },
    );
    await eventually(async () => {
      expect((await auditOf(accountId, 'session.signed_in')).data.length).toBeGreaterThanOrEqual(1);
      expect((await auditOf(accountId, 'session.sign_in_failed')).data.length).toBeGreaterThanOrEqual(3);
    });
  });

  it('takes each recovery code once', async () => {
    const { email, recovery } = await enrolled();
    const first = await web.call.signIn({ email, password: PASSWORD });
    const full = await web.call.completeSignIn({ token: first.token, code: recovery[0].toUpperCase() });
    expect((await web.call.getMfaStatus({ token: full.token })).recovery_codes_left).toBe(9);
    const second = await web.call.signIn({ email, password: PASSWORD });
    await expect(web.call.completeSignIn({ token: second.token, code: recovery[0] })).rejects.toMatchObject({
      code: 'unauthorized',
      fieldErrors: [{ field: 'code' }],
    });
    expect((await web.call.completeSignIn({ token: second.token, code: recovery[1] })).token).toBeTruthy();
  });

  it('starts over from the password after five wrong codes, and a password reset does not skip the code', async () => {
    const { email, secret, step } = await enrolled();
    const waiting = await web.call.signIn({ email, password: PASSWORD });
    for (let i = 0; i < 4; i++)
      await expect(web.call.completeSignIn({ token: waiting.token, code: 'zzzzz-zzzzz' })).rejects.toMatchObject({
        fieldErrors: [{ field: 'code' }],
      });
    await expect(web.call.completeSignIn({ token: waiting.token, code: 'zzzzz-zzzzz' })).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringContaining('too many wrong codes'),
    });
    // Even the right code is now too late for that sign-in.
    await expect(
      web.call.completeSignIn({ token: waiting.token, code: codeAt(secret, step + 1) }),
    ).rejects.toMatchObject({
      code: 'unauthorized',
      fieldErrors: [],
    });
    await web.call.requestPasswordReset({ email });
    const mail = await waitForMail(svc.topology, email, 2);
    const token = /\/dashboard\/password\/reset\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? '';
    const reset = await web.call.resetPassword({ token, password: 'a brand new passphrase' });
    expect(reset.code_required).toBe(true);
    await expect(web.call.getSession({ token: reset.token })).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await web.call.completeSignIn({ token: reset.token, code: codeAt(secret, step + 1) })).token).toBeTruthy();
  });
});

describe('an account that requires two-factor sign-in', () => {
  it('sends a member without it to enrolment at their next sign-in, and nobody can turn theirs off', async () => {
    const { email, session, accountId, userId } = await signedUp();
    const account = await web.call.setRequireMfa({ account_id: accountId, require_mfa: true });
    expect(account.require_mfa).toBe(true);
    // The session open when it was required is not interrupted.
    expect((await web.call.getSession({ token: session.token })).must_enrol_mfa).toBe(false);
    const next = await web.call.signIn({ email, password: PASSWORD });
    expect(next).toMatchObject({ code_required: false, must_enrol_mfa: true });
    expect((await web.call.getSession({ token: next.token })).must_enrol_mfa).toBe(true);
    const { secret } = await web.call.beginMfaEnrolment({ token: next.token });
    await web.call.confirmMfaEnrolment({ token: next.token, code: codeOf(secret) });
    expect((await web.call.getSession({ token: next.token })).must_enrol_mfa).toBe(false);
    expect(await web.call.getMfaStatus({ token: next.token })).toMatchObject({ enabled: true, required: true });
    await expect(web.call.disableMfa({ token: next.token, password: PASSWORD })).rejects.toMatchObject({
      code: 'forbidden',
    });
    // Once no longer required: the password is checked, then it is off and recorded.
    await web.call.setRequireMfa({ account_id: accountId, require_mfa: false });
    await expect(web.call.disableMfa({ token: next.token, password: 'wrong password!' })).rejects.toMatchObject({
      code: 'unauthorized',
      fieldErrors: [{ field: 'password' }],
    });
    await web.call.disableMfa({ token: next.token, password: PASSWORD });
    expect((await web.call.signIn({ email, password: PASSWORD })).code_required).toBe(false);
    await eventually(async () => {
      const settings = (await auditOf(accountId, 'settings.updated')).data;
      expect(settings).toHaveLength(2);
      expect(settings[0]).toMatchObject({ actor: { type: 'system' }, target: { type: 'account', id: accountId } });
      const off = (await auditOf(accountId, 'mfa.disabled')).data;
      expect(off).toEqual([expect.objectContaining({ target: { type: 'user', id: userId } })]);
    });
  });
});

describe('the operator', () => {
  it('turns off the two-factor sign-in of someone who lost their phone and recovery codes, as the system', async () => {
    const { email, accountId, userId } = await enrolled();
    const reset = (address: string) =>
      runServiceJob(accountService, 'reset-mfa', {
        env: envFor('account', svc.topology, { port: 0 }),
        args: { email: address },
      });
    expect(await reset(email.toUpperCase())).toMatchObject({ email, reset: true });
    expect(await reset(email)).toMatchObject({ reset: false });
    await expect(reset('nobody-here@example.com')).rejects.toThrow('nobody signs in with');
    await expect(reset('not an address')).rejects.toThrow();
    expect((await web.call.signIn({ email, password: PASSWORD })).code_required).toBe(false);
    const entries = await eventually(async () => {
      const found = (await auditOf(accountId, 'mfa.disabled')).data;
      expect(found).toHaveLength(1);
      return found;
    });
    expect(entries[0]).toMatchObject({ actor: { type: 'system' }, target: { type: 'user', id: userId } });
  });

  // Last in the file: the running service keeps the old pepper only, and this moves every secret.
  it('re-seals every TOTP secret under the current pepper version, once', async () => {
    const { email, secret } = await enrolled();
    const env = envFor('account', svc.topology, { port: 0 });
    const old = env.API_KEY_PEPPER.includes(':') ? env.API_KEY_PEPPER : `legacy:${env.API_KEY_PEPPER}`;
    const rotated = { ...env, API_KEY_PEPPER: `p2:${'n'.repeat(24)},${old}` };
    const first = await runServiceJob(accountService, 'reseal', { env: rotated });
    expect(first).toMatchObject({ key_id: 'p2', unreadable: [] });
    expect(first.resealed).toBeGreaterThanOrEqual(1);
    expect(await runServiceJob(accountService, 'reseal', { env: rotated })).toMatchObject({ resealed: 0 });
    // A service with the new version first reads the moved secret: the person's code still signs them in.
    const next = await startAccount(svc.topology, { API_KEY_PEPPER: rotated.API_KEY_PEPPER });
    try {
      const waiting = await next.web.call.signIn({ email, password: PASSWORD });
      expect(
        (await next.web.call.completeSignIn({ token: waiting.token, code: codeOf(secret, 1) })).token,
      ).toBeTruthy();
    } finally {
      await next.stop();
    }
  });
});
