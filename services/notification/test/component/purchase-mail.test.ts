import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { connect, type NatsConnection } from 'nats';
import { NOTIFICATION_MAIL_CONSUMER } from '@licensing/runtime';
import { spawnComponent } from '../../../../scripts/lib/launch';
import { waitForServing } from '../../../../scripts/lib/health';
import { consumerDrained } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import type { ReceivedMail } from '../../../../test/support/smtp-inbox';
import { MAIL_WAIT, PUBLIC_BASE_URL, type RunningNotification, startNotification } from './running-notification';

// The purchase e-mail through a real SMTP server (smtp-server): the notification service queues one
// mail per checkout.completed (durable JetStream consumer, unique per event) and sends it with retries.
// The purchases are published as the checkout service completes them; the vendor, product and licence
// (and its signed file) come from the account, product and licence services, faked at the gRPC boundary.
// The purchase on the hosted page itself, mailed end to end: test/system/licence-journey.test.ts.

jest.setTimeout(120_000);

let n: RunningNotification;
let nc: NatsConnection;
let account: string;
let product: string;
let quietProduct: string;

const VENDOR = 'Acme <b>Tools</b> & "Sons"';
const PRODUCT = 'Pixel <Forge> & Co';

beforeAll(async () => {
  n = await startNotification();
  nc = await connect({ servers: n.t.natsUrl });
  account = n.vendor({ name: VENDOR, plan: 'enterprise', support_email: 'help@acme.example' });
  product = n.product(account, PRODUCT, { price: { amount: 4900, currency: 'EUR' } }).id;
  quietProduct = n.product(account, 'Sends its own mail', { email_on_purchase: false }).id;
});

afterAll(async () => {
  await nc?.close();
  await n?.stop();
});

/** A test-mode purchase, as the checkout service completes it: the licence key. */
const buy = async (email: string, of = product) => (await n.purchase(account, of, email)).licence.key;
const part = (m: ReceivedMail, type: string) => m.parts.find((p) => p.contentType === type && !p.filename);
const emailsFor = async (key: string, of = account) => (await n.emails(of)).filter((e) => e.license_key === key);

it('a test-mode purchase e-mails the buyer: vendor, support e-mail, product, key, expiry, portal link, licence file; multipart, escaped', async () => {
  const key = await buy('first@example.com');
  const mail = await n.mailTo('first@example.com');
  expect(mail.headers['content-type']).toMatch(/^multipart\//);
  expect(mail.headers.from).toContain('Acme');
  expect(mail.headers.from).toContain(' <no-reply@localhost>');
  expect(mail.headers['reply-to']).toContain('help@acme.example');
  const text = part(mail, 'text/plain')!.body;
  const html = part(mail, 'text/html')!.body;
  const portal = `${PUBLIC_BASE_URL}/portal/${account}`;
  for (const s of [key, PRODUCT, VENDOR, 'help@acme.example', portal, 'Expires: never']) expect(text).toContain(s);
  expect(html).toContain(key);
  expect(html).toContain('Pixel &lt;Forge&gt; &amp; Co');
  expect(html).toContain('Acme &lt;b&gt;Tools&lt;/b&gt; &amp; &quot;Sons&quot;');
  expect(html).not.toContain('<Forge>');
  expect(html).not.toContain('<b>Tools');
  expect(html).toContain(`href="${portal}"`);
  const file = mail.parts.find((p) => p.filename === 'license.json')!;
  expect(file.contentType).toBe('application/json');
  const signed = JSON.parse(file.body);
  expect(signed).toMatchObject({ algorithm: 'Ed25519', kid: expect.any(String), signature: expect.any(String) });
  expect(JSON.parse(Buffer.from(signed.payload, 'base64url').toString()).license_key).toBe(key);
  // Its result recorded (the SMTP server has the mail a moment before the sender notes it sent).
  const logged = await eventually(async () => {
    const [m] = await emailsFor(key);
    expect(m?.status).toBe('sent');
    return m;
  }, MAIL_WAIT);
  expect(logged).toMatchObject({
    to: 'first@example.com',
    template: 'purchase',
    status: 'sent',
    attempts: 1,
    last_error: '',
    sent_at: expect.stringMatching(/^\d{4}-/),
    subject: `Your licence key for ${PRODUCT}`,
  });
});

it('the same checkout.completed delivered twice sends one mail', async () => {
  const { licence, event } = await n.purchase(account, product, 'twice@example.com');
  await n.mailTo('twice@example.com');
  // Published again as a new stream message (no Nats-Msg-Id, so the stream keeps it): the consumer gets it again.
  await nc.jetstream().publish(`${n.t.subjectPrefix}.checkout.completed`, JSON.stringify(event));
  await consumerDrained(nc, n.t.stream, NOTIFICATION_MAIL_CONSUMER, MAIL_WAIT);
  // A later purchase's mail has gone out: the sender has passed the duplicate, if there were one.
  await buy('after-twice@example.com');
  await n.mailTo('after-twice@example.com');
  expect(n.inbox.to('twice@example.com')).toHaveLength(1);
  expect(await emailsFor(licence.key)).toHaveLength(1);
});

it('email_on_purchase: false sends nothing', async () => {
  const key = await buy('quiet@example.com', quietProduct);
  // Events are queued in order: once a later purchase's mail is out, the quiet one was passed over.
  await buy('after-quiet@example.com');
  await n.mailTo('after-quiet@example.com');
  expect(n.inbox.to('quiet@example.com')).toHaveLength(0);
  expect(await emailsFor(key)).toHaveLength(0);
  expect(n.peers.products.requestsTo('getProduct')).toContainEqual({ account_id: account, id: quietProduct });
});

it("SendLicenseEmail (POST /licenses/{key}/email) queues the licence's purchase e-mail again, and it goes out", async () => {
  const licence = n.issue(account, product, 'api@example.com');
  await n.licenceCreated(licence, true);
  expect(part(await n.mailTo('api@example.com'), 'text/plain')!.body).toContain(licence.key);
  const again = await n.api.sendLicenseEmail({ account_id: account, key: licence.key, dedupe_key: '' });
  expect(again).toMatchObject({ to: 'api@example.com', status: 'queued', license_key: licence.key });
  await n.mailTo('api@example.com', 2);
  expect(await emailsFor(licence.key)).toHaveLength(2);
  const unknown = await n.api
    .sendLicenseEmail({ account_id: account, key: 'AAAAA-BBBBB', dedupe_key: '' })
    .catch((e: unknown) => e);
  expect(unknown).toMatchObject({ code: 'not_found' });
});

it('while the SMTP server is down the mail waits (queued, attempts and last_error shown), and goes out when it is back', async () => {
  n.inbox.down = true;
  const key = await buy('outage@example.com');
  const waiting = await eventually(async () => {
    const [m] = await emailsFor(key);
    expect(m).toMatchObject({ status: 'queued', last_error: expect.stringMatching(/./) });
    expect(m.attempts).toBeGreaterThanOrEqual(1);
    return m;
  }, MAIL_WAIT);
  expect(waiting.sent_at).toBe('');
  expect(n.inbox.to('outage@example.com')).toHaveLength(0);
  n.inbox.down = false;
  await n.mailTo('outage@example.com');
  await eventually(async () => expect((await emailsFor(key))[0]).toMatchObject({ status: 'sent' }), MAIL_WAIT);
  expect(n.inbox.to('outage@example.com')).toHaveLength(1);
});

it('a restart of the notification service mid-send loses nothing: the mail goes out after it', async () => {
  n.inbox.hold();
  const key = await buy('restart@example.com');
  await eventually(() => expect(n.inbox.heldCount).toBeGreaterThanOrEqual(1), MAIL_WAIT);
  // A graceful stop waits for the mail in flight (it times out against the silent server and is recorded as failed once).
  await n.stopService();
  n.inbox.release();
  await n.startAgain();
  await n.mailTo('restart@example.com');
  await eventually(
    async () => expect((await emailsFor(key))[0]).toMatchObject({ status: 'sent', attempts: 2 }),
    MAIL_WAIT,
  );
  expect(n.inbox.to('restart@example.com')).toHaveLength(1);
});

it("events read after the customer's erasure send the erased customer nothing", async () => {
  const vendor = n.vendor();
  const monthly = n.product(vendor, 'Editor Monthly', {
    price: { amount: 900, currency: 'EUR', interval: 'month' },
  }).id;
  const customer = 'Late.Buyer@Example.com';
  const placeholder = 'erased-5e1f@erased.invalid';
  // The notification service is away: the events asking for mail wait in the stream, read after the erasure.
  await n.stopService();
  try {
    // A subscription bought: its checkout.completed asks for the purchase e-mail.
    const { licence } = await n.purchase(vendor, monthly, customer);
    // A batch whose items ask for the licence mail: its license.batch_completed makes the notification read it.
    const batch = await n.batchCompleted(vendor, monthly, [
      { customer_email: customer, send_email: true },
      { customer_email: 'batch.neighbour@example.com', send_email: true },
    ]);
    // Erased as the licence service erases it: its licences and the batch's item name the placeholder.
    licence.customer_email = placeholder;
    n.licence(vendor, batch.results[0].key)!.customer_email = placeholder;
    batch.results[0].customer_email = placeholder;
  } finally {
    // The notification service is back and reads the events from before the erasure.
    await n.startAgain();
  }
  await n.mailTo('batch.neighbour@example.com');
  for (const consumer of ['notification-mail', 'notification-batch-mail'])
    await consumerDrained(nc, n.t.stream, consumer, MAIL_WAIT);
  // The purchase e-mail that checkout.completed asked for (with the old address) fails unsent, logged
  // under the placeholder; the batch's item names the placeholder, so none is queued for it.
  await eventually(async () => {
    const log = await n.emails(vendor);
    expect(log.map((m) => [m.to, m.template, m.status, m.last_error]).sort()).toEqual([
      ['batch.neighbour@example.com', 'purchase', 'sent', ''],
      [placeholder, 'purchase', 'failed', 'the customer was erased'],
    ]);
  }, MAIL_WAIT);
  expect(n.inbox.received.filter((m) => m.to.some((to) => /late\.buyer|erased\.invalid/i.test(to)))).toEqual([]);
  const db = await n.db();
  expect(JSON.stringify(await db.collection('emails').find({ account_id: vendor }).toArray())).not.toMatch(
    /late\.buyer/i,
  );
});

/** Runs the notification service as a process (from dist) on its own address, which a test can kill. */
async function asProcesses(run: (spawn: () => Promise<ChildProcess>) => Promise<void>): Promise<void> {
  await n.stopService();
  const logDir = mkdtempSync(join(tmpdir(), 'licensing-notification-kill-'));
  const addr = `127.0.0.1:${n.env.GRPC_PORT}`;
  const children: ChildProcess[] = [];
  const spawn = async () => {
    const log = join(logDir, `notification-${children.length}.log`);
    const { child, exited } = spawnComponent('notification', { ...n.env, METRICS_PORT: '0' }, log);
    children.push(child);
    await waitForServing(addr, 30_000, exited);
    return child;
  };
  try {
    await run(spawn);
  } finally {
    n.inbox.release();
    for (const c of children)
      if (c.exitCode === null && c.signalCode === null) {
        const gone = once(c, 'exit');
        c.kill('SIGTERM');
        await gone;
      }
    await n.startAgain();
    rmSync(logDir, { recursive: true, force: true });
  }
}

it('a notification process SIGKILLed mid-send: started again on its address it releases its claim at once, and the mail arrives once', async () => {
  const db = await n.db();
  await asProcesses(async (spawn) => {
    const first = await spawn();
    const heldBefore = n.inbox.heldCount;
    n.inbox.hold();
    const key = await buy('killed@example.com');
    await eventually(() => expect(n.inbox.heldCount).toBe(heldBefore + 1), MAIL_WAIT);
    // The server has the DATA and has not answered: the attempt is in the middle of its send.
    const claimed = await db.collection('emails').findOne({ license_key: key });
    expect(claimed).toMatchObject({
      status: 'queued',
      attempts: 0,
      claimed_by: expect.stringContaining(`:${n.env.GRPC_PORT}`),
    });
    const claimEnds = (claimed!.next_attempt_at as Date).getTime();
    first.kill('SIGKILL');
    await once(first, 'exit');
    // The held DATA is refused: that copy never counts as delivered.
    n.inbox.release();
    await spawn();
    await n.mailTo('killed@example.com');
    // Sent by the new process on its start, well before the killed one's claim would have run out.
    expect(Date.now()).toBeLessThan(claimEnds);
    await eventually(
      // The killed attempt recorded nothing: one attempt, the one that sent it.
      async () => expect((await emailsFor(key))[0]).toMatchObject({ status: 'sent', attempts: 1 }),
      MAIL_WAIT,
    );
    expect(n.inbox.to('killed@example.com')).toHaveLength(1);
  });
});

it("another account sees none of this account's mail and cannot send its licences' mail", async () => {
  const other = n.vendor();
  expect(await n.emails(other)).toEqual([]);
  const [mine] = await n.emails(account);
  const refused = await n.api
    .sendLicenseEmail({ account_id: other, key: mine.license_key, dedupe_key: '' })
    .catch((e: unknown) => e);
  expect(refused).toMatchObject({ code: 'not_found' });
  // Pages newest first with a cursor, like every list.
  const page = await n.api.listEmails({ account_id: account, page: { limit: 2, starting_after: '' } });
  expect(page.page!.has_more).toBe(true);
  const next = await n.api.listEmails({
    account_id: account,
    page: { limit: 2, starting_after: page.page!.next_cursor },
  });
  expect(next.data[0].id < page.data[1].id).toBe(true);
});
