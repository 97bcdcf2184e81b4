import { createHash } from 'node:crypto';
import { LicenseServiceClient, NotificationServiceClient } from '@licensing/proto';
import { AppError, connectMongo, createClient } from '@licensing/runtime';
import { credentialOf } from '../../scripts/lib/topology';
import { client, startStack, TestClock, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';
import { SmtpInbox, type ReceivedMail } from '../support/smtp-inbox';

// The customer portal's sign-in links and seat rescue mail, through the notification service's gRPC (as the
// gateway calls it) and a real SMTP server: a link goes only to an address holding licences of the account,
// works once (even for two concurrent redeems on FerretDB), only for its account and within the hour.

let stack: Stack;
let inbox: SmtpInbox;
const clock = new TestClock();
let notify: ReturnType<typeof createClient<NotificationServiceClient>>;
/** The API's calls (seat rescue, erasure), which are the gateway's. */
let api: ReturnType<typeof createClient<NotificationServiceClient>>;
let licenses: ReturnType<typeof createClient<LicenseServiceClient>>;
let db: Awaited<ReturnType<typeof connectMongo>>;
let accountA: string;
let accountB: string;
let productA: string;
let productB: string;

const VENDOR = 'Acme <b>Tools</b> & "Sons"';
const PRODUCT = 'Pixel <Forge>';
const MAIL_WAIT = { timeoutMs: 20_000, intervalMs: 50 };
const HOUR = 3_600_000;

beforeAll(async () => {
  inbox = await SmtpInbox.start();
  stack = await startStack(
    {
      customerMailUrl: inbox.url,
      mailRetryScheduleS: Array(40).fill('0.3').join(','),
      mailSendIntervalMs: 100,
      mailSendTimeoutMs: 1500,
      portalCleanupIntervalMs: 200,
    },
    {},
    clock,
  );
  const a = await stack.admin.createAccount({ name: VENDOR, plan: 'enterprise' });
  accountA = a.account!.id;
  await stack.admin.updateAccount({ id: accountA, per_minute_limit: 100_000, support_email: 'help@acme.example' });
  const b = await stack.newAccount();
  accountB = b.accountId;
  const product = async (secret: string) =>
    (
      await client(stack.url, secret)('POST', '/api/v1/products', {
        name: PRODUCT,
        price: { amount: 900, currency: 'EUR' },
      })
    ).body.id as string;
  productA = await product(a.secret);
  productB = await product(b.apiKey);
  // The customer portal's calls (sign-in links), which only the web component may make.
  const web = credentialOf(stack.topology, 'web');
  notify = createClient(NotificationServiceClient, stack.addrs.notification, web);
  api = createClient(NotificationServiceClient, stack.addrs.notification, credentialOf(stack.topology, 'gateway'));
  licenses = createClient(LicenseServiceClient, stack.addrs.license, web);
  db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_notification`);
});

afterAll(async () => {
  notify?.close();
  api?.close();
  licenses?.close();
  await db?.close();
  await stack?.stop();
  await inbox?.stop();
});

const issue = async (accountId: string, customerEmail: string) =>
  (
    await licenses.call.createLicense({
      account_id: accountId,
      product_id: accountId === accountA ? productA : productB,
      customer_email: customerEmail,
      idempotency_key: '',
      send_email: false,
    })
  ).key;

/** The `n`th mail to `address`, waited for. */
const mailTo = (address: string, n = 1) => inbox.mailTo(address, n, MAIL_WAIT);

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
  (await notify.call.listEmails({ account_id: accountId, page: { limit: 100, starting_after: '' } })).data;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A sign-in requested now gets its own mail (requests of one address within a minute are one). */
const nextMinute = () => clock.advance(61_000);

it('a sign-in link goes out only to an address holding licences of that account; none for others, nothing logged', async () => {
  await issue(accountA, 'Holder@Example.com');
  await issue(accountB, 'b-customer@example.com');
  // Well within a minute, so the duplicate below falls into the same one.
  clock.advance(60_000 - (clock.now().getTime() % 60_000) + 1000);
  for (const email of ['stranger@example.com', 'b-customer@example.com', '  HOLDER@example.com ', 'holder@example.com'])
    expect(await notify.call.requestPortalLink({ account_id: accountA, email })).toEqual({});
  const mail = await mailTo('holder@example.com');
  expect(mail.headers['content-type']).toMatch(/^multipart\//);
  expect(mail.headers.from).toContain('Acme');
  expect(mail.headers['reply-to']).toContain('help@acme.example');
  expect(header(mail, 'subject')).toBe(`Sign in to your licences from ${VENDOR}`);
  const link = linkOf(mail);
  expect(link.url.startsWith(`${stack.url}/portal/${accountA}/link?token=`)).toBe(true);
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
  expect(inbox.to('stranger@example.com')).toHaveLength(0);
  expect(inbox.to('b-customer@example.com')).toHaveLength(0);
  expect(inbox.to('holder@example.com')).toHaveLength(1);
  const metrics = await (await fetch(stack.metricsUrls.notification)).text();
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
    next_attempt_at: new Date(clock.now().getTime() + 24 * HOUR),
    last_error: null,
    created_at: clock.now(),
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
  await stack.stopService('license');
  let restarted = false;
  try {
    for (const email of ['waiting.holder@example.com', 'waiting.stranger@example.com'])
      await notify.call.requestPortalLink({ account_id: accountA, email });
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
    await stack.restartService('license');
    restarted = true;
    await mailTo('waiting.holder@example.com');
    await eventually(async () => {
      const mine = (await logOf(accountA)).filter((e) => e.to.startsWith('waiting.'));
      expect(mine.map((e) => [e.to, e.status, e.attempts > 1])).toEqual([['waiting.holder@example.com', 'sent', true]]);
      // The stranger's request is gone without a trace, unsent.
      expect(await db.collection('emails').countDocuments({ to: 'waiting.stranger@example.com' })).toBe(0);
    }, MAIL_WAIT);
    expect(inbox.to('waiting.stranger@example.com')).toHaveLength(0);
  } finally {
    if (!restarted) await stack.restartService('license');
  }
});

it('an address that is not one is a clear invalid_request', async () => {
  for (const email of ['', 'nobody', `${'x'.repeat(260)}@example.com`]) {
    const err = await refusal(notify.call.requestPortalLink({ account_id: accountA, email }));
    expect(err.code).toBe('invalid_request');
  }
});

it('the link redeems once: of two concurrent redeems exactly one opens a session; never for another account', async () => {
  nextMinute();
  await notify.call.requestPortalLink({ account_id: accountA, email: 'holder@example.com' });
  const { token } = linkOf(await mailTo('holder@example.com', 2));
  const other = await refusal(notify.call.redeemPortalLink({ account_id: accountB, token }));
  expect(other.code).toBe('invalid_request');
  const both = await Promise.allSettled([
    notify.call.redeemPortalLink({ account_id: accountA, token }),
    notify.call.redeemPortalLink({ account_id: accountA, token }),
  ]);
  const opened = both.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  const refused = both.filter((r) => r.status === 'rejected').map((r) => r.reason as AppError);
  expect(opened).toHaveLength(1);
  expect(refused).toHaveLength(1);
  expect(refused[0].code).toBe('invalid_request');
  // One message for another account's link and a used one (and an unknown one).
  expect(refused[0].message).toBe(other.message);
  const unknown = await refusal(notify.call.redeemPortalLink({ account_id: accountA, token: 'x'.repeat(43) }));
  expect(unknown.message).toBe(other.message);
  const again = await refusal(notify.call.redeemPortalLink({ account_id: accountA, token }));
  expect(again.message).toBe(other.message);

  const session = opened[0];
  expect(session).toMatchObject({ account_id: accountA, email: 'holder@example.com', license_key: '' });
  expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(session.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(Date.parse(session.expires_at) - clock.now().getTime()).toBeGreaterThan(11.9 * HOUR);
  // The session is stored under the digest of its token only.
  expect(await db.collection('portal_sessions').countDocuments({ _id: sha256(session.token) as any })).toBe(1);

  const read = await notify.call.getPortalSession({ account_id: accountA, token: session.token });
  expect(read).toMatchObject({ token: '', csrf_token: session.csrf_token, email: 'holder@example.com' });
  expect((await refusal(notify.call.getPortalSession({ account_id: accountB, token: session.token }))).code).toBe(
    'unauthorized',
  );
  expect(await notify.call.endPortalSession({ account_id: accountA, token: session.token })).toEqual({});
  expect((await refusal(notify.call.getPortalSession({ account_id: accountA, token: session.token }))).code).toBe(
    'unauthorized',
  );
  // Ending it again is fine.
  expect(await notify.call.endPortalSession({ account_id: accountA, token: session.token })).toEqual({});
});

it('seat rescue: queued and sent to the owner with a link scoped to the licence; one per hour, retry time given', async () => {
  const key = await issue(accountA, 'Rescue.Owner@example.com');
  const queued = await api.call.requestSeatRescue({ account_id: accountA, key });
  expect(queued).toMatchObject({
    template: 'seat_rescue',
    to: 'rescue.owner@example.com',
    license_key: key,
    status: 'queued',
  });
  const mail = await mailTo('rescue.owner@example.com');
  expect(header(mail, 'subject')).toBe('Free a seat for Pixel <Forge>');
  expect(text(mail)).toContain('every seat is taken');
  expect(text(mail)).toContain(key);
  expect(html(mail)).toContain('Pixel &lt;Forge&gt;');
  const session = await notify.call.redeemPortalLink({ account_id: accountA, token: linkOf(mail).token });
  expect(session).toMatchObject({ email: 'rescue.owner@example.com', license_key: key });

  clock.advance(10 * 60_000);
  const limited = await refusal(api.call.requestSeatRescue({ account_id: accountA, key }));
  expect(limited.code).toBe('rate_limited');
  expect(limited.retryAfterS).toBeGreaterThan(49 * 60 - 5);
  expect(limited.retryAfterS).toBeLessThanOrEqual(50 * 60);
  expect(inbox.to('rescue.owner@example.com')).toHaveLength(1);
});

it('seat rescue: a parallel burst queues one mail', async () => {
  const key = await issue(accountA, 'burst@example.com');
  const all = await Promise.allSettled(
    Array.from({ length: 6 }, () => api.call.requestSeatRescue({ account_id: accountA, key })),
  );
  expect(all.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  for (const r of all.filter((x) => x.status === 'rejected'))
    expect(((r as PromiseRejectedResult).reason as AppError).code).toBe('rate_limited');
  await mailTo('burst@example.com');
  expect((await logOf(accountA)).filter((e) => e.license_key === key)).toHaveLength(1);
});

it("seat rescue: a licence with no customer e-mail is conflict, another account's key not_found", async () => {
  const key = await issue(accountA, 'gone@example.com');
  await licenses.call.updateLicense({
    account_id: accountA,
    key,
    customer_email: 'erased-ab12cd@erased.invalid',
    metadata: {},
    set_entitlements: false,
    entitlements: [],
  });
  const none = await refusal(api.call.requestSeatRescue({ account_id: accountA, key }));
  expect(none.code).toBe('conflict');
  expect(none.message).toContain('no customer e-mail');
  const foreign = await refusal(api.call.requestSeatRescue({ account_id: accountB, key }));
  expect(foreign.code).toBe('not_found');
});

it("EraseCustomer replaces the address in the account's mail log and ends that customer's sessions; idempotent", async () => {
  const key = await issue(accountA, 'Erase.Me@example.com');
  const keyB = await issue(accountB, 'erase.me@example.com');
  await notify.call.sendLicenseEmail({ account_id: accountA, key, dedupe_key: '' });
  await notify.call.sendLicenseEmail({ account_id: accountB, key: keyB, dedupe_key: '' });
  nextMinute();
  await notify.call.requestPortalLink({ account_id: accountA, email: 'erase.me@example.com' });
  await eventually(() => expect(inbox.to('erase.me@example.com')).toHaveLength(3), MAIL_WAIT);
  const signIn = inbox.to('erase.me@example.com').find((m) => header(m, 'subject').startsWith('Sign in'))!;
  const session = await notify.call.redeemPortalLink({ account_id: accountA, token: linkOf(signIn).token });
  // A second link not used yet: it goes too.
  nextMinute();
  await notify.call.requestPortalLink({ account_id: accountA, email: 'erase.me@example.com' });
  await mailTo('erase.me@example.com', 4);
  // Its result recorded (the SMTP server has the mail a moment before the sender notes it sent).
  await eventually(async () => {
    const mine = (await logOf(accountA)).filter((e) => e.to === 'erase.me@example.com');
    expect(mine.map((e) => e.status)).toEqual(['sent', 'sent', 'sent']);
  }, MAIL_WAIT);

  const placeholder = 'erased-0f3a9c@erased.invalid';
  const out = await api.call.eraseCustomer({ account_id: accountA, email: ' ERASE.me@Example.com', placeholder });
  expect(out.erased).toBe(5); // three mails, a session and a link
  const log = await logOf(accountA);
  expect(log.filter((e) => e.to.includes('erase.me'))).toHaveLength(0);
  expect(log.filter((e) => e.to === placeholder)).toHaveLength(3);
  expect((await refusal(notify.call.getPortalSession({ account_id: accountA, token: session.token }))).code).toBe(
    'unauthorized',
  );
  expect(await db.collection('portal_links').countDocuments({ email: 'erase.me@example.com' })).toBe(0);
  // Another account's customer of the same address is untouched.
  expect((await logOf(accountB)).filter((e) => e.to === 'erase.me@example.com')).toHaveLength(1);
  expect(
    (await api.call.eraseCustomer({ account_id: accountA, email: 'erase.me@example.com', placeholder })).erased,
  ).toBe(0);
});

it('a link does not work after its hour, a session not after its twelve; both are cleaned up', async () => {
  nextMinute();
  await notify.call.requestPortalLink({ account_id: accountA, email: 'holder@example.com' });
  const late = linkOf(await mailTo('holder@example.com', 3));
  nextMinute();
  await notify.call.requestPortalLink({ account_id: accountA, email: 'holder@example.com' });
  const fresh = linkOf(await mailTo('holder@example.com', 4));
  const session = await notify.call.redeemPortalLink({ account_id: accountA, token: fresh.token });

  clock.advance(HOUR + 1000);
  expect((await refusal(notify.call.redeemPortalLink({ account_id: accountA, token: late.token }))).code).toBe(
    'invalid_request',
  );
  expect(await notify.call.getPortalSession({ account_id: accountA, token: session.token })).toMatchObject({
    email: 'holder@example.com',
  });
  await eventually(
    async () =>
      expect(await db.collection('portal_links').countDocuments({ token_digest: sha256(late.token) })).toBe(0),
    MAIL_WAIT,
  );

  clock.advance(12 * HOUR);
  expect((await refusal(notify.call.getPortalSession({ account_id: accountA, token: session.token }))).code).toBe(
    'unauthorized',
  );
  await eventually(async () => {
    expect(await db.collection('portal_sessions').countDocuments({ _id: sha256(session.token) as any })).toBe(0);
    expect(await db.collection('portal_link_uses').countDocuments({})).toBe(0);
  }, MAIL_WAIT);
});
