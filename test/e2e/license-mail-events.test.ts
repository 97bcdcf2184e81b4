import { connect, type NatsConnection } from 'nats';
import type { DomainEvent } from '@licensing/proto';
import { NOTIFICATION_CREATED_MAIL_CONSUMER, NOTIFICATION_REROLLED_MAIL_CONSUMER } from '@licensing/runtime';
import { client, startStack, type Stack } from '../support/stack';
import { consumerDrained, EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { SmtpInbox, type ReceivedMail } from '../support/smtp-inbox';
import { WebhookReceiver } from '../support/webhook-receiver';
import { WebClient } from '../support/web-client';
import { dashboardOwner } from '../support/fixture';

// The licence mail asked through the API (send_email on POST /licenses and POST /licenses/{key}/reroll)
// rides on license.created / license.rerolled, written in the licence's own write; the notification
// service's durable consumers queue it (one mail per event id). Nothing of it is sent from a request
// handler: the notification service being down when the licence is made loses no mail.

jest.setTimeout(120_000);

let stack: Stack;
let inbox: SmtpInbox;
let receiver: WebhookReceiver;
let events: EventLog;
let nc: NatsConnection;
let api: ReturnType<typeof client>;
let productId: string;

const MAIL_WAIT = { timeoutMs: 30_000, intervalMs: 50 };

beforeAll(async () => {
  inbox = await SmtpInbox.start();
  receiver = await WebhookReceiver.start();
  stack = await startStack({
    customerMailUrl: inbox.url,
    mailRetryScheduleS: Array(40).fill('0.3').join(','),
    mailSendIntervalMs: 100,
    mailSendTimeoutMs: 1500,
  });
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  nc = await connect({ servers: stack.topology.natsUrl });
  productId = (await api('POST', '/api/v1/products', { name: 'Mailed' })).body.id;
  const hook = await api('POST', '/api/v1/webhooks', {
    url: `${receiver.url}/licences`,
    events: ['license.created', 'license.rerolled'],
  });
  expect(hook.status).toBe(201);
});

afterAll(async () => {
  await nc?.close();
  await events?.close();
  await stack?.stop();
  await receiver?.stop();
  await inbox?.stop();
});

/** The `n`th mail to `address`, waited for. */
const mailTo = (address: string, n = 1) => inbox.mailTo(address, n, MAIL_WAIT);

const emailsFor = async (key: string) =>
  ((await api('GET', '/api/v1/emails?limit=100')).body.data as any[]).filter((e) => e.license_key === key);

const text = (m: ReceivedMail) => m.parts.find((p) => p.contentType === 'text/plain' && !p.filename)!.body;

/** The event of this type about this licence (by id), as the stream holds it. */
const eventOf = (type: string, licenseId: string) =>
  events.waitFor((e) => e.type === type && (e.data as any).license.id === licenseId);

/** The webhook request of this event (its body as the vendor gets it). */
const hookBodyOf = async (eventId: string) =>
  eventually(() => {
    const req = receiver.at('/licences').find((r) => JSON.parse(r.body).id === eventId);
    expect(req).toBeDefined();
    return JSON.parse(req!.body);
  }, MAIL_WAIT);

/** Waits until the consumer has read (and acknowledged) everything the stream holds. */
const drained = (consumer: string) => consumerDrained(nc, stack.topology.stream, consumer, MAIL_WAIT);

it('the notification service down: a licence created with send_email answers 201, and its mail goes out once it is back; the webhook body has no send_email', async () => {
  await stack.stopService('notification');
  try {
    const created = await api('POST', '/api/v1/licenses', {
      product_id: productId,
      customer_email: 'down-create@example.com',
      send_email: true,
    });
    expect(created.status).toBe(201);
    const event = await eventOf('license.created', created.body.license.id);
    expect(event.send_email).toBe(true);
    // The vendor's webhook gets the event without the internal field.
    const body = await hookBodyOf(event.id);
    expect(body.data.license.key).toBe(created.body.license_key);
    expect(body).not.toHaveProperty('send_email');
    expect(Object.keys(body).sort()).toEqual(['created_at', 'data', 'id', 'type']);
    expect(inbox.to('down-create@example.com')).toHaveLength(0);
  } finally {
    await stack.restartService('notification');
  }
  expect(text(await mailTo('down-create@example.com'))).toMatch(/[0-9A-Z]{5}-/);
  const [mail] = inbox.to('down-create@example.com');
  const key = (await api('GET', '/api/v1/licenses?customer_email=down-create@example.com')).body.data[0].key;
  expect(text(mail)).toContain(key);
  await eventually(async () => expect(await emailsFor(key)).toMatchObject([{ status: 'sent' }]), MAIL_WAIT);
});

it('the notification service down: a reroll with send_email answers 200, and the new key is mailed once it is back', async () => {
  const created = await api('POST', '/api/v1/licenses', {
    product_id: productId,
    customer_email: 'down-reroll@example.com',
  });
  const oldKey = created.body.license_key as string;
  await stack.stopService('notification');
  let newKey: string;
  try {
    const rerolled = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { send_email: true });
    expect(rerolled.status).toBe(200);
    newKey = rerolled.body.key;
    expect(newKey).not.toBe(oldKey);
    const event = await eventOf('license.rerolled', created.body.license.id);
    expect(event.send_email).toBe(true);
    const body = await hookBodyOf(event.id);
    expect(body.data.license.key).toBe(newKey);
    expect(body).not.toHaveProperty('send_email');
  } finally {
    await stack.restartService('notification');
  }
  const mail = await mailTo('down-reroll@example.com');
  expect(text(mail)).toContain(newKey);
  expect(text(mail)).not.toContain(oldKey);
  await eventually(async () => expect(await emailsFor(newKey)).toMatchObject([{ status: 'sent' }]), MAIL_WAIT);
  // A retried reroll (the old key, its answer lost) answers the same key and asks no second mail.
  const again = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { send_email: true });
  expect(again.body.key).toBe(newKey);
  expect(
    events.all().filter((e) => e.type === 'license.rerolled' && (e.data as any).license.key === newKey),
  ).toHaveLength(1);
});

/**
 * Everything asked so far has been handled: both consumers have read the whole stream, and a later
 * licence's mail (to `address`) has gone out, so the sender has passed any mail queued before it.
 */
async function everythingBefore(address: string): Promise<void> {
  await drained(NOTIFICATION_CREATED_MAIL_CONSUMER);
  await drained(NOTIFICATION_REROLLED_MAIL_CONSUMER);
  await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: address, send_email: true });
  await mailTo(address);
}

it('without send_email the events ask for nothing, and no mail is queued', async () => {
  const created = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'quiet@example.com' });
  const rerolled = await api('POST', `/api/v1/licenses/${created.body.license_key}/reroll`, {});
  expect(rerolled.status).toBe(200);
  expect((await eventOf('license.created', created.body.license.id)).send_email).toBeUndefined();
  expect((await eventOf('license.rerolled', created.body.license.id)).send_email).toBeUndefined();
  await everythingBefore('after-quiet@example.com');
  expect(inbox.to('quiet@example.com')).toHaveLength(0);
  expect(await emailsFor(created.body.license_key)).toHaveLength(0);
  expect(await emailsFor(rerolled.body.key)).toHaveLength(0);
});

it('the same license.created and license.rerolled delivered twice queue one mail each', async () => {
  const created = await api('POST', '/api/v1/licenses', {
    product_id: productId,
    customer_email: 'twice@example.com',
    send_email: true,
  });
  const key = created.body.license_key as string;
  const first = await eventOf('license.created', created.body.license.id);
  await mailTo('twice@example.com');
  const rerolled = await api('POST', `/api/v1/licenses/${key}/reroll`, { send_email: true });
  const newKey = rerolled.body.key as string;
  const second = await eventOf('license.rerolled', created.body.license.id);
  await mailTo('twice@example.com', 2);
  const js = nc.jetstream();
  // Published again as new stream messages (no Nats-Msg-Id, so the stream keeps them): the consumers get them again.
  for (const e of [first, second] as DomainEvent[])
    await js.publish(`${stack.topology.subjectPrefix}.${e.type}`, JSON.stringify(e));
  await everythingBefore('after-twice@example.com');
  expect(inbox.to('twice@example.com')).toHaveLength(2);
  expect(await emailsFor(key)).toHaveLength(1);
  expect(await emailsFor(newKey)).toHaveLength(1);
});

it('a create retried with the same Idempotency-Key answers the same licence, writes one event and sends one mail', async () => {
  const body = { product_id: productId, customer_email: 'retry@example.com', send_email: true };
  const first = await api('POST', '/api/v1/licenses', body, { 'idempotency-key': 'mail-events-retry' });
  const second = await api('POST', '/api/v1/licenses', body, { 'idempotency-key': 'mail-events-retry' });
  expect(first.status).toBe(201);
  expect(second.body.license_key).toBe(first.body.license_key);
  await mailTo('retry@example.com');
  // The same key with a request that differs (send_email no longer asked) is not the same request.
  const other = await api(
    'POST',
    '/api/v1/licenses',
    { product_id: productId, customer_email: 'retry@example.com' },
    { 'idempotency-key': 'mail-events-retry' },
  );
  expect(other.status).toBe(422);
  await drained(NOTIFICATION_CREATED_MAIL_CONSUMER);
  await api('POST', '/api/v1/licenses', {
    product_id: productId,
    customer_email: 'after-retry@example.com',
    send_email: true,
  });
  await mailTo('after-retry@example.com');
  expect(
    events.all().filter((e) => e.type === 'license.created' && (e.data as any).license.id === first.body.license.id),
  ).toHaveLength(1);
  expect(inbox.to('retry@example.com')).toHaveLength(1);
  expect(await emailsFor(first.body.license_key)).toHaveLength(1);
});

it("the dashboard's reroll form with the mail box ticked mails the new key through license.rerolled", async () => {
  const owner = await dashboardOwner(stack);
  const product = (await owner.api('POST', '/api/v1/products', { name: 'Dash Mailed' })).body.id;
  const key = (
    await owner.api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'dash-reroll@example.com' })
  ).body.license_key as string;
  const form = await owner.web.get(`/dashboard/licenses/${key}/reroll`);
  expect(form.status).toBe(200);
  const done = await owner.web.post(`/dashboard/licenses/${key}/reroll`, {
    _csrf: WebClient.csrf(form.html),
    grace_hours: '0',
    confirm: 'yes',
    send_email: 'yes',
  });
  expect(done.status).toBe(303);
  const newKey = (await owner.api('GET', '/api/v1/licenses?customer_email=dash-reroll@example.com')).body.data[0].key;
  expect(newKey).not.toBe(key);
  expect(text(await mailTo('dash-reroll@example.com'))).toContain(newKey);
  const event = events.all().find((e) => e.type === 'license.rerolled' && (e.data as any).license.key === newKey)!;
  expect(event.send_email).toBe(true);
});

it("a reroll's send_email that is not a boolean is refused with 400 naming it, and the key stays", async () => {
  const created = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'bad@example.com' });
  const key = created.body.license_key as string;
  const refused = await api('POST', `/api/v1/licenses/${key}/reroll`, { send_email: 'yes' });
  expect(refused.status).toBe(400);
  expect(refused.body.code).toBe('invalid_request');
  expect(JSON.stringify(refused.body)).toContain('send_email');
  expect((await api('GET', `/api/v1/licenses/${key}`)).body.key).toBe(key);
});
