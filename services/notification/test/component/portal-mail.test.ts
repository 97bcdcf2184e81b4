import { createHash } from 'node:crypto';
import type { Connection } from 'mongoose';
import { AppError } from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';
import type { ReceivedMail } from '../../../../test/support/smtp-inbox';
import { MAIL_WAIT, PUBLIC_BASE_URL, type RunningNotification, startNotification } from './running-notification';

// The customer portal's sign-in links and seat rescue mail, through the notification service's gRPC (as the
// web component and the gateway call it) and a real SMTP server, its account, product and licence services
// faked at the gRPC boundary: a link goes only to an address holding licences of the account (HoldsLicences),
// works once (even for two concurrent redeems on FerretDB), only for its account and within the hour.

jest.setTimeout(120_000);

let n: RunningNotification;
let db: Connection;
let accountA: string;
let accountB: string;
let productA: string;
let productB: string;

const VENDOR = 'Acme <b>Tools</b> & "Sons"';
const PRODUCT = 'Pixel <Forge>';
const HOUR = 3_600_000;

beforeAll(async () => {
  n = await startNotification();
  db = await n.db();
  accountA = n.vendor({ name: VENDOR, plan: 'enterprise', support_email: 'help@acme.example' });
  accountB = n.vendor();
  productA = n.product(accountA, PRODUCT, { price: { amount: 900, currency: 'EUR' } }).id;
  productB = n.product(accountB, PRODUCT, { price: { amount: 900, currency: 'EUR' } }).id;
});

afterAll(async () => {
  await n?.stop();
});

// The customer portal's calls (sign-in links, sessions) are the web component's (n.webApi), which only it
// may make; seat rescue and erasure are the gateway's (n.api).

const issue = async (accountId: string, customerEmail: string) =>
  n.issue(accountId, accountId === accountA ? productA : productB, customerEmail).key;

/** A header as read: RFC 2047 encoded words (nodemailer's =?UTF-8?Q?…?= and ?B?) decoded. */
const header = (m: ReceivedMail, name: string) =>
  (m.headers[name] ?? '')
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_w, enc: string, data: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : Buffer.from(
            data
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );

const text = (m: ReceivedMail) => m.parts.find((p) => p.contentType === 'text/plain')!.body;
const html = (m: ReceivedMail) => m.parts.find((p) => p.contentType === 'text/html')!.body;

/** The one-time link of a mail: the account it names and its token. */
function linkOf(m: ReceivedMail): { url: string; accountId: string; token: string } {
  const found = /(http:\/\/\S+\/portal\/([^/\s]+)\/link\?token=([A-Za-z0-9_-]{43}))/.exec(text(m));
  expect(found).not.toBeNull();
  return { url: found![1], accountId: found![2], token: found![3] };
}

/** The AppError a call was refused with. */
async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

const logOf = async (accountId: string) =>
  (await n.webApi.listEmails({ account_id: accountId, page: { limit: 100, starting_after: '' } })).data;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A sign-in requested now gets its own mail (requests of one address within a minute are one). */
const nextMinute = () => n.clock.advance(61_000);

it('a sign-in link goes out only to an address holding licences of that account; none for others, nothing logged', async () => {
  await issue(accountA, 'Holder@Example.com');
  await issue(accountB, 'b-customer@example.com');
  // Well within a minute, so the duplicate below falls into the same one.
  n.clock.advance(60_000 - (n.clock.now().getTime() % 60_000) + 1000);
  for (const email of ['stranger@example.com', 'b-customer@example.com', '  HOLDER@example.com ', 'holder@example.com'])
    expect(await n.webApi.requestPortalLink({ account_id: accountA, email })).toEqual({});
  const mail = await n.mailTo('holder@example.com');
  expect(mail.headers['content-type']).toMatch(/^multipart\//);
  expect(mail.headers.from).toContain('Acme');
  expect(mail.headers['reply-to']).toContain('help@acme.example');
  expect(header(mail, 'subject')).toBe(`Sign in to your licences from ${VENDOR}`);
  const link = linkOf(mail);
  expect(link.url.startsWith(`${PUBLIC_BASE_URL}/portal/${accountA}/link?token=`)).toBe(true);
  expect(text(mail)).toContain('works once, within one hour');
  expect(html(mail)).toContain('Acme &lt;b&gt;Tools&lt;/b&gt; &amp; &quot;Sons&quot;');
  expect(html(mail)).not.toContain('<b>Tools');
  // The requests before it were taken first (oldest first): dropped, unsent and unlogged.
  await eventually(async () => {
    const log = await logOf(accountA);
    expect(log.filter((e) => e.template === 'portal_link').map((e) => [e.to, e.status])).toEqual([
      ['holder@example.com', 'sent'],
    ]);
  }, MAIL_WAIT);
  expect(n.inbox.to('stranger@example.com')).toHaveLength(0);
  expect(n.inbox.to('b-customer@example.com')).toHaveLength(0);
  expect(n.inbox.to('holder@example.com')).toHaveLength(1);
  const metrics = await (await fetch(n.metricsUrl())).text();
  expect(metrics).toMatch(/licensing_emails_total\{outcome="dropped"[^}]*\} 2\b/);
  // Only the digest of the link's token is stored.
  const stored = await db.collection('portal_links').find({ account_id: accountA }).toArray();
  expect(stored.map((l) => l.token_digest)).toContain(sha256(link.token));
  expect(JSON.stringify(stored)).not.toContain(link.token);
});

it("the mail log never shows a sign-in request whose address the sender has not confirmed: it may be a stranger's", async () => {
  const pending = {
    _id: 'eml_pending_signin_request',
    request_key: `portal:${accountA}:stranger2@example.com:test`,
    account_id: accountA,
    template: 'portal_link',
    to: 'stranger2@example.com',
    license_key: '',
    subject: '',
    status: 'queued',
    attempts: 0,
    // Not due for a day: the sender leaves it alone while the log is read.
    next_attempt_at: new Date(n.clock.now().getTime() + 24 * HOUR),
    last_error: null,
    created_at: n.clock.now(),
    sent_at: null,
  };
  // Written as the service writes them: unconfirmed, and after failed attempts too (queued or given up).
  const variants = [
    { ...pending, recipient_confirmed: false },
    {
      ...pending,
      _id: 'eml_pending_signin_tried',
      request_key: `${pending.request_key}:2`,
      recipient_confirmed: false,
      attempts: 3,
      last_error: 'the licence service is not answering',
    },
    {
      ...pending,
      _id: 'eml_pending_signin_failed',
      request_key: `${pending.request_key}:3`,
      recipient_confirmed: false,
      attempts: 9,
      status: 'failed',
      next_attempt_at: null,
    },
  ];
  await db.collection('emails').insertMany(variants as never[]);
  try {
    expect((await logOf(accountA)).map((e) => e.to)).not.toContain('stranger2@example.com');
  } finally {
    await db.collection('emails').deleteMany({ to: 'stranger2@example.com' });
  }
});

it("with the licence service away, sign-in requests fail their attempts unseen; a stranger's never shows, a holder's shows once confirmed", async () => {
  await issue(accountA, 'waiting.holder@example.com');
  nextMinute();
  await n.stopLicences();
  let restarted = false;
  try {
    for (const email of ['waiting.holder@example.com', 'waiting.stranger@example.com'])
      await n.webApi.requestPortalLink({ account_id: accountA, email });
    // Each has had failed attempts (the licence service cannot say whether the address is a customer)...
    await eventually(async () => {
      const rows = await db
        .collection('emails')
        .find({ account_id: accountA, to: /^waiting\./ })
        .toArray();
      expect(rows.map((r) => [r.to, r.attempts >= 2, r.recipient_confirmed, r.last_error !== null]).sort()).toEqual([
        ['waiting.holder@example.com', true, false, true],
        ['waiting.stranger@example.com', true, false, true],
      ]);
    }, MAIL_WAIT);
    // ...and the vendor sees neither: not in the log, however many attempts failed.
    expect((await logOf(accountA)).filter((e) => e.to.startsWith('waiting.'))).toEqual([]);
    await n.startLicencesAgain();
    restarted = true;
    await n.mailTo('waiting.holder@example.com');
    await eventually(async () => {
      const mine = (await logOf(accountA)).filter((e) => e.to.startsWith('waiting.'));
      expect(mine.map((e) => [e.to, e.status, e.attempts > 1])).toEqual([['waiting.holder@example.com', 'sent', true]]);
      // The stranger's request is gone without a trace, unsent.
      expect(await db.collection('emails').countDocuments({ to: 'waiting.stranger@example.com' })).toBe(0);
    }, MAIL_WAIT);
    expect(n.inbox.to('waiting.stranger@example.com')).toHaveLength(0);
  } finally {
    if (!restarted) await n.startLicencesAgain();
  }
});

it('an address that is not one is a clear invalid_request', async () => {
  for (const email of ['', 'nobody', `${'x'.repeat(260)}@example.com`]) {
    const err = await refusal(n.webApi.requestPortalLink({ account_id: accountA, email }));
    expect(err.code).toBe('invalid_request');
  }
});

it('the link redeems once: of two concurrent redeems exactly one opens a session; never for another account', async () => {
  nextMinute();
  await n.webApi.requestPortalLink({ account_id: accountA, email: 'holder@example.com' });
  const { token } = linkOf(await n.mailTo('holder@example.com', 2));
  const other = await refusal(n.webApi.redeemPortalLink({ account_id: accountB, token }));
  expect(other.code).toBe('invalid_request');
  const both = await Promise.allSettled([
    n.webApi.redeemPortalLink({ account_id: accountA, token }),
    n.webApi.redeemPortalLink({ account_id: accountA, token }),
  ]);
  const opened = both.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  const refused = both.filter((r) => r.status === 'rejected').map((r) => r.reason as AppError);
  expect(opened).toHaveLength(1);
  expect(refused).toHaveLength(1);
  expect(refused[0].code).toBe('invalid_request');
  // One message for another account's link and a used one (and an unknown one).
  expect(refused[0].message).toBe(other.message);
  const unknown = await refusal(n.webApi.redeemPortalLink({ account_id: accountA, token: 'x'.repeat(43) }));
  expect(unknown.message).toBe(other.message);
  const again = await refusal(n.webApi.redeemPortalLink({ account_id: accountA, token }));
  expect(again.message).toBe(other.message);

  const session = opened[0];
  expect(session).toMatchObject({ account_id: accountA, email: 'holder@example.com', license_key: '' });
  expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(session.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(Date.parse(session.expires_at) - n.clock.now().getTime()).toBeGreaterThan(11.9 * HOUR);
  // The session is stored under the digest of its token only.
  expect(await db.collection('portal_sessions').countDocuments({ _id: sha256(session.token) as any })).toBe(1);

  const read = await n.webApi.getPortalSession({ account_id: accountA, token: session.token });
  expect(read).toMatchObject({ token: '', csrf_token: session.csrf_token, email: 'holder@example.com' });
  expect((await refusal(n.webApi.getPortalSession({ account_id: accountB, token: session.token }))).code).toBe(
    'unauthorized',
  );
  expect(await n.webApi.endPortalSession({ account_id: accountA, token: session.token })).toEqual({});
  expect((await refusal(n.webApi.getPortalSession({ account_id: accountA, token: session.token }))).code).toBe(
    'unauthorized',
  );
  // Ending it again is fine.
  expect(await n.webApi.endPortalSession({ account_id: accountA, token: session.token })).toEqual({});
});

it('seat rescue: queued and sent to the owner with a link scoped to the licence; one per hour, retry time given', async () => {
  const key = await issue(accountA, 'Rescue.Owner@example.com');
  const queued = await n.api.requestSeatRescue({ account_id: accountA, key });
  expect(queued).toMatchObject({
    template: 'seat_rescue',
    to: 'rescue.owner@example.com',
    license_key: key,
    status: 'queued',
  });
  const mail = await n.mailTo('rescue.owner@example.com');
  expect(header(mail, 'subject')).toBe('Free a seat for Pixel <Forge>');
  expect(text(mail)).toContain('every seat is taken');
  expect(text(mail)).toContain(key);
  expect(html(mail)).toContain('Pixel &lt;Forge&gt;');
  const session = await n.webApi.redeemPortalLink({ account_id: accountA, token: linkOf(mail).token });
  expect(session).toMatchObject({ email: 'rescue.owner@example.com', license_key: key });

  n.clock.advance(10 * 60_000);
  const limited = await refusal(n.api.requestSeatRescue({ account_id: accountA, key }));
  expect(limited.code).toBe('rate_limited');
  expect(limited.retryAfterS).toBeGreaterThan(49 * 60 - 5);
  expect(limited.retryAfterS).toBeLessThanOrEqual(50 * 60);
  expect(n.inbox.to('rescue.owner@example.com')).toHaveLength(1);
});

it('seat rescue: a parallel burst queues one mail', async () => {
  const key = await issue(accountA, 'burst@example.com');
  const all = await Promise.allSettled(
    Array.from({ length: 6 }, () => n.api.requestSeatRescue({ account_id: accountA, key })),
  );
  expect(all.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  for (const r of all.filter((x) => x.status === 'rejected'))
    expect(((r as PromiseRejectedResult).reason as AppError).code).toBe('rate_limited');
  await n.mailTo('burst@example.com');
  expect((await logOf(accountA)).filter((e) => e.license_key === key)).toHaveLength(1);
});

it("seat rescue: a licence with no customer e-mail is conflict, another account's key not_found", async () => {
  const key = await issue(accountA, 'gone@example.com');
  // As the licence service leaves it once the customer is erased (DELETE /api/v1/customers/{email}).
  n.licence(accountA, key)!.customer_email = 'erased-ab12cd@erased.invalid';
  const none = await refusal(n.api.requestSeatRescue({ account_id: accountA, key }));
  expect(none.code).toBe('conflict');
  expect(none.message).toContain('no customer e-mail');
  const foreign = await refusal(n.api.requestSeatRescue({ account_id: accountB, key }));
  expect(foreign.code).toBe('not_found');
});

it("EraseCustomer replaces the address in the account's mail log and ends that customer's sessions; idempotent", async () => {
  const key = await issue(accountA, 'Erase.Me@example.com');
  const keyB = await issue(accountB, 'erase.me@example.com');
  await n.webApi.sendLicenseEmail({ account_id: accountA, key, dedupe_key: '' });
  await n.webApi.sendLicenseEmail({ account_id: accountB, key: keyB, dedupe_key: '' });
  nextMinute();
  await n.webApi.requestPortalLink({ account_id: accountA, email: 'erase.me@example.com' });
  await eventually(() => expect(n.inbox.to('erase.me@example.com')).toHaveLength(3), MAIL_WAIT);
  const signIn = n.inbox.to('erase.me@example.com').find((m) => header(m, 'subject').startsWith('Sign in'))!;
  const session = await n.webApi.redeemPortalLink({ account_id: accountA, token: linkOf(signIn).token });
  // A second link not used yet: it goes too.
  nextMinute();
  await n.webApi.requestPortalLink({ account_id: accountA, email: 'erase.me@example.com' });
  await n.mailTo('erase.me@example.com', 4);
  // Its result recorded (the SMTP server has the mail a moment before the sender notes it sent).
  await eventually(async () => {
    const mine = (await logOf(accountA)).filter((e) => e.to === 'erase.me@example.com');
    expect(mine.map((e) => e.status)).toEqual(['sent', 'sent', 'sent']);
  }, MAIL_WAIT);

  const placeholder = 'erased-0f3a9c@erased.invalid';
  const out = await n.api.eraseCustomer({ account_id: accountA, email: ' ERASE.me@Example.com', placeholder });
  expect(out.erased).toBe(5); // three mails, a session and a link
  const log = await logOf(accountA);
  expect(log.filter((e) => e.to.includes('erase.me'))).toHaveLength(0);
  expect(log.filter((e) => e.to === placeholder)).toHaveLength(3);
  expect((await refusal(n.webApi.getPortalSession({ account_id: accountA, token: session.token }))).code).toBe(
    'unauthorized',
  );
  expect(await db.collection('portal_links').countDocuments({ email: 'erase.me@example.com' })).toBe(0);
  // Another account's customer of the same address is untouched.
  expect((await logOf(accountB)).filter((e) => e.to === 'erase.me@example.com')).toHaveLength(1);
  expect((await n.api.eraseCustomer({ account_id: accountA, email: 'erase.me@example.com', placeholder })).erased).toBe(
    0,
  );
});

it('a link does not work after its hour, a session not after its twelve; both are cleaned up', async () => {
  nextMinute();
  await n.webApi.requestPortalLink({ account_id: accountA, email: 'holder@example.com' });
  const late = linkOf(await n.mailTo('holder@example.com', 3));
  nextMinute();
  await n.webApi.requestPortalLink({ account_id: accountA, email: 'holder@example.com' });
  const fresh = linkOf(await n.mailTo('holder@example.com', 4));
  const session = await n.webApi.redeemPortalLink({ account_id: accountA, token: fresh.token });

  n.clock.advance(HOUR + 1000);
  expect((await refusal(n.webApi.redeemPortalLink({ account_id: accountA, token: late.token }))).code).toBe(
    'invalid_request',
  );
  expect(await n.webApi.getPortalSession({ account_id: accountA, token: session.token })).toMatchObject({
    email: 'holder@example.com',
  });
  await eventually(
    async () =>
      expect(await db.collection('portal_links').countDocuments({ token_digest: sha256(late.token) })).toBe(0),
    MAIL_WAIT,
  );

  n.clock.advance(12 * HOUR);
  expect((await refusal(n.webApi.getPortalSession({ account_id: accountA, token: session.token }))).code).toBe(
    'unauthorized',
  );
  await eventually(async () => {
    expect(await db.collection('portal_sessions').countDocuments({ _id: sha256(session.token) as any })).toBe(0);
    expect(await db.collection('portal_link_uses').countDocuments({})).toBe(0);
  }, MAIL_WAIT);
});
