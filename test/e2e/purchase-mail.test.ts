import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { connect, type NatsConnection } from 'nats';
import { NOTIFICATION_MAIL_CONSUMER, connectMongo } from '@licensing/runtime';
import { envFor } from '../../scripts/lib/topology';
import { spawnComponent } from '../../scripts/lib/launch';
import { waitForServing } from '../../scripts/lib/health';
import { client, startStack, type Stack } from '../support/stack';
import { consumerDrained, EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { SmtpInbox, type ReceivedMail } from '../support/smtp-inbox';
import { WebClient } from '../support/web-client';
import { dashboardOwner } from '../support/fixture';

// The purchase e-mail through a real SMTP server (smtp-server): the notification service queues one
// mail per checkout.completed (durable JetStream consumer, unique per event) and sends it with retries.

let stack: Stack;
let inbox: SmtpInbox;
let events: EventLog;
let nc: NatsConnection;
let api: ReturnType<typeof client>;
let accountId: string;
let productId: string;
let quietProductId: string;

const VENDOR = 'Acme <b>Tools</b> & "Sons"';
const PRODUCT = 'Pixel <Forge> & Co';
const MAIL_WAIT = { timeoutMs: 20_000, intervalMs: 50 };

beforeAll(async () => {
  inbox = await SmtpInbox.start();
  stack = await startStack(
    {
      customerMailUrl: inbox.url,
      mailRetryScheduleS: Array(40).fill('0.3').join(','),
      mailSendIntervalMs: 100,
      mailSendTimeoutMs: 1500,
    },
    { CHECKOUT_REQUESTS_PER_MINUTE: '1000' },
  );
  const created = await stack.admin.createAccount({ name: VENDOR, plan: 'enterprise' });
  accountId = created.account!.id;
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000, support_email: 'help@acme.example' });
  api = client(stack.url, created.secret);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  nc = await connect({ servers: stack.topology.natsUrl });
  productId = (await api('POST', '/api/v1/products', { name: PRODUCT, price: { amount: 4900, currency: 'EUR' } })).body
    .id;
  quietProductId = (
    await api('POST', '/api/v1/products', {
      name: 'Sends its own mail',
      price: { amount: 900, currency: 'EUR' },
      email_on_purchase: false,
    })
  ).body.id;
});

afterAll(async () => {
  await nc?.close();
  await events?.close();
  await stack?.stop();
  await inbox?.stop();
});

/** A test-mode purchase on the hosted page: the licence key. */
async function buy(email: string, product = productId): Promise<string> {
  const s = await api('POST', '/api/v1/checkout', {
    product_id: product,
    success_url: 'https://vendor.example/thanks',
  });
  expect(s.status).toBe(201);
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(`/checkout/${s.body.id}`);
  const paid = await web.post(`/checkout/${s.body.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email,
    card: '4242424242424242',
  });
  expect(paid.status).toBe(303);
  const done = await events.waitFor(
    (e) => e.type === 'checkout.completed' && (e.data as any).checkout.id === s.body.id,
  );
  return (done.data as { license_key: string }).license_key;
}

/** The `n`th mail to `address`, waited for. */
const mailTo = (address: string, n = 1) => inbox.mailTo(address, n, MAIL_WAIT);

const part = (m: ReceivedMail, type: string) => m.parts.find((p) => p.contentType === type && !p.filename);
const emailsFor = async (key: string, a = api) =>
  ((await a('GET', '/api/v1/emails?limit=100')).body.data as any[]).filter((e) => e.license_key === key);

it('a test-mode purchase e-mails the buyer: vendor, support e-mail, product, key, expiry, portal link, licence file; multipart, escaped', async () => {
  const key = await buy('first@example.com');
  const mail = await mailTo('first@example.com');
  expect(mail.headers['content-type']).toMatch(/^multipart\//);
  expect(mail.headers.from).toContain('Acme');
  expect(mail.headers.from).toContain(' <no-reply@localhost>');
  expect(mail.headers['reply-to']).toContain('help@acme.example');
  const text = part(mail, 'text/plain')!.body;
  const html = part(mail, 'text/html')!.body;
  const portal = `${stack.url}/portal/${accountId}`;
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
  const [logged] = await emailsFor(key);
  expect(logged).toMatchObject({
    to: 'first@example.com',
    template: 'purchase',
    status: 'sent',
    attempts: 1,
    last_error: null,
    sent_at: expect.any(String),
    subject: `Your licence key for ${PRODUCT}`,
  });
});

it('the same checkout.completed delivered twice sends one mail', async () => {
  const key = await buy('twice@example.com');
  await mailTo('twice@example.com');
  const event = events.all().find((e) => e.type === 'checkout.completed' && (e.data as any).license_key === key)!;
  // Published again as a new stream message (no Nats-Msg-Id, so the stream keeps it): the consumer gets it again.
  await nc.jetstream().publish(`${stack.topology.subjectPrefix}.checkout.completed`, JSON.stringify(event));
  await consumerDrained(nc, stack.topology.stream, NOTIFICATION_MAIL_CONSUMER, MAIL_WAIT);
  // A later purchase's mail has gone out: the sender has passed the duplicate, if there were one.
  await buy('after-twice@example.com');
  await mailTo('after-twice@example.com');
  expect(inbox.to('twice@example.com')).toHaveLength(1);
  expect(await emailsFor(key)).toHaveLength(1);
});

it('email_on_purchase: false sends nothing', async () => {
  const product = await api('GET', `/api/v1/products/${quietProductId}`);
  expect(product.body.email_on_purchase).toBe(false);
  const key = await buy('quiet@example.com', quietProductId);
  // Events are queued in order: once a later purchase's mail is out, the quiet one was passed over.
  await buy('after-quiet@example.com');
  await mailTo('after-quiet@example.com');
  expect(inbox.to('quiet@example.com')).toHaveLength(0);
  expect(await emailsFor(key)).toHaveLength(0);
  expect((await api('PATCH', `/api/v1/products/${quietProductId}`, { email_on_purchase: 'no' })).status).toBe(400);
});

it('send_email on POST /licenses and POST /licenses/{key}/email (202) send the purchase e-mail', async () => {
  const created = await api('POST', '/api/v1/licenses', {
    product_id: productId,
    customer_email: 'api@example.com',
    send_email: true,
  });
  expect(created.status).toBe(201);
  const key = created.body.license_key;
  expect((await mailTo('api@example.com')).parts.find((p) => p.contentType === 'text/plain')!.body).toContain(key);
  const again = await api('POST', `/api/v1/licenses/${key}/email`);
  expect(again.status).toBe(202);
  expect(again.body).toMatchObject({ to: 'api@example.com', status: 'queued', license_key: key });
  await mailTo('api@example.com', 2);
  expect(await emailsFor(key)).toHaveLength(2);
  // A retried request (the same Idempotency-Key) answers the same licence and queues no second mail.
  const retried = { product_id: productId, customer_email: 'retry@example.com', send_email: true };
  const first = await api('POST', '/api/v1/licenses', retried, { 'idempotency-key': 'mail-retry-1' });
  const second = await api('POST', '/api/v1/licenses', retried, { 'idempotency-key': 'mail-retry-1' });
  expect(second.body.license_key).toBe(first.body.license_key);
  await mailTo('retry@example.com');
  expect(await emailsFor(first.body.license_key)).toHaveLength(1);
  const silent = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'silent@example.com' });
  expect(silent.status).toBe(201);
  expect((await api('POST', '/api/v1/licenses/AAAAA-BBBBB/email')).status).toBe(404);
  const bad = await api('POST', '/api/v1/licenses', {
    product_id: productId,
    customer_email: 'x@example.com',
    send_email: 'yes',
  });
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe('invalid_request');
});

it('while the SMTP server is down the mail waits (queued, attempts and last_error shown), and goes out when it is back', async () => {
  inbox.down = true;
  const key = await buy('outage@example.com');
  const waiting = await eventually(async () => {
    const [m] = await emailsFor(key);
    expect(m).toMatchObject({ status: 'queued', last_error: expect.any(String) });
    expect(m.attempts).toBeGreaterThanOrEqual(1);
    return m;
  }, MAIL_WAIT);
  expect(waiting.sent_at).toBeNull();
  expect(inbox.to('outage@example.com')).toHaveLength(0);
  inbox.down = false;
  await mailTo('outage@example.com');
  await eventually(async () => expect((await emailsFor(key))[0]).toMatchObject({ status: 'sent' }), MAIL_WAIT);
  expect(inbox.to('outage@example.com')).toHaveLength(1);
});

it('a restart of the notification service mid-send loses nothing: the mail goes out after it', async () => {
  inbox.hold();
  const key = await buy('restart@example.com');
  await eventually(() => expect(inbox.heldCount).toBeGreaterThanOrEqual(1), MAIL_WAIT);
  // A graceful stop waits for the mail in flight (it times out against the silent server and is recorded as failed once).
  await stack.stopService('notification');
  inbox.release();
  await stack.restartService('notification');
  await mailTo('restart@example.com');
  await eventually(
    async () => expect((await emailsFor(key))[0]).toMatchObject({ status: 'sent', attempts: 2 }),
    MAIL_WAIT,
  );
  expect(inbox.to('restart@example.com')).toHaveLength(1);
});

it('a notification process SIGKILLed mid-send: started again on its address it releases its claim at once, and the mail arrives once', async () => {
  // The in-process service is replaced by a real process on the same address, which can be killed.
  await stack.stopService('notification');
  const logDir = mkdtempSync(join(tmpdir(), 'licensing-notification-kill-'));
  const port = Number(stack.addrs.notification.split(':')[1]);
  const env = {
    ...envFor('notification', stack.topology, { port, addrs: stack.addrs, publicBaseUrl: stack.url }),
    METRICS_PORT: '0',
  };
  const children: ChildProcess[] = [];
  const spawnNotification = async () => {
    const { child, exited } = spawnComponent('notification', env, join(logDir, `notification-${children.length}.log`));
    children.push(child);
    await waitForServing(stack.addrs.notification, 30_000, exited);
    return child;
  };
  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_notification`);
  try {
    const first = await spawnNotification();
    const heldBefore = inbox.heldCount;
    inbox.hold();
    const key = await buy('killed@example.com');
    await eventually(() => expect(inbox.heldCount).toBe(heldBefore + 1), MAIL_WAIT);
    // The server has the DATA and has not answered: the attempt is in the middle of its send.
    const claimed = await db.collection('emails').findOne({ license_key: key });
    expect(claimed).toMatchObject({ status: 'queued', attempts: 0, claimed_by: expect.stringContaining(`:${port}`) });
    const claimEnds = (claimed!.next_attempt_at as Date).getTime();
    first.kill('SIGKILL');
    await once(first, 'exit');
    // The held DATA is refused: that copy never counts as delivered.
    inbox.release();
    await spawnNotification();
    await mailTo('killed@example.com');
    // Sent by the new process on its start, well before the killed one's claim would have run out.
    expect(Date.now()).toBeLessThan(claimEnds);
    await eventually(
      // The killed attempt recorded nothing: one attempt, the one that sent it.
      async () => expect((await emailsFor(key))[0]).toMatchObject({ status: 'sent', attempts: 1 }),
      MAIL_WAIT,
    );
    expect(inbox.to('killed@example.com')).toHaveLength(1);
  } finally {
    inbox.release();
    await db.close();
    for (const c of children)
      if (c.exitCode === null && c.signalCode === null) {
        const gone = once(c, 'exit');
        c.kill('SIGTERM');
        await gone;
      }
    await stack.restartService('notification');
    rmSync(logDir, { recursive: true, force: true });
  }
});

it("another account sees none of this account's mail and cannot send its licences' mail", async () => {
  const other = await stack.newAccount();
  const otherApi = client(stack.url, other.apiKey);
  const list = await otherApi('GET', '/api/v1/emails');
  expect(list.status).toBe(200);
  expect(list.body.data).toEqual([]);
  const [mine] = (await api('GET', '/api/v1/emails?limit=1')).body.data;
  expect((await otherApi('POST', `/api/v1/licenses/${mine.license_key}/email`)).status).toBe(404);
  expect((await api('GET', '/api/v1/emails?starting_after=nope')).status).toBe(400);
  // Pages newest first with a cursor, like every list.
  const page = await api('GET', '/api/v1/emails?limit=2');
  expect(page.body.has_more).toBe(true);
  const next = await api('GET', `/api/v1/emails?limit=2&starting_after=${page.body.next_cursor}`);
  expect(next.body.data[0].id < page.body.data[1].id).toBe(true);
});

it("the dashboard lists the mail log and sends a licence's e-mail again; another vendor sees and sends none of it", async () => {
  const owner = await dashboardOwner(stack);
  const bad = await owner.web.post('/dashboard/settings/support-email', {
    _csrf: owner.csrf,
    support_email: 'not an address',
  });
  expect(bad.status).toBe(400);
  expect(bad.html).toContain('support_email must be a valid e-mail address');
  const saved = await owner.web.post('/dashboard/settings/support-email', {
    _csrf: owner.csrf,
    support_email: 'care@dash.example',
  });
  expect(saved.status).toBe(200);
  expect(saved.html).toContain('value="care@dash.example"');
  const product = (await owner.api('POST', '/api/v1/products', { name: 'Dash Product' })).body.id;
  const key = (
    await owner.api('POST', '/api/v1/licenses', {
      product_id: product,
      customer_email: 'dash@example.com',
      send_email: true,
    })
  ).body.license_key;
  expect(part(await mailTo('dash@example.com'), 'text/plain')!.body).toContain('care@dash.example');
  const log = await owner.web.get('/dashboard/emails');
  expect(log.status).toBe(200);
  expect(log.html).toContain('dash@example.com');
  expect(log.html).toContain(key);
  const page = await owner.web.get(`/dashboard/licenses/${key}`);
  expect(page.html).toContain('Send the e-mail again');
  const sent = await owner.web.post(`/dashboard/licenses/${key}/email`, { _csrf: WebClient.csrf(page.html) });
  expect(sent.status).toBe(202);
  expect(sent.html).toContain('The e-mail to dash@example.com is queued.');
  await mailTo('dash@example.com', 2);
  const other = await dashboardOwner(stack, 'other');
  expect((await other.web.get('/dashboard/emails')).html).not.toContain('dash@example.com');
  const otherPage = await other.web.get('/dashboard/emails');
  const refused = await other.web.post(`/dashboard/licenses/${key}/email`, { _csrf: WebClient.csrf(otherPage.html) });
  expect(refused.status).toBe(404);
  expect(inbox.to('dash@example.com')).toHaveLength(2);
});
