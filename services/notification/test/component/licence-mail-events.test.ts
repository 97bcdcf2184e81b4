import type { DomainEvent } from '@licensing/proto';
import { NOTIFICATION_CREATED_MAIL_CONSUMER, NOTIFICATION_REROLLED_MAIL_CONSUMER } from '@licensing/runtime';
import { connect, type NatsConnection } from 'nats';
import { consumerDrained } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import type { ReceivedMail } from '../../../../test/support/smtp-inbox';
import { MAIL_WAIT, type RunningNotification, startNotification } from './running-notification';

// The licence mail asked through the API (send_email on POST /licenses and POST /licenses/{key}/reroll)
// rides on license.created / license.rerolled, which the licence service writes in the licence's own
// write (services/license/test/component/licence-mail-events.test.ts); the notification service's durable
// consumers queue it, one mail per event id. Here those events are published on the stream as the licence
// service publishes them: the notification service being down when the licence is made loses no mail.
// That the vendor's webhook body never carries send_email: services/webhook/test/component/fan-out.test.ts;
// the API's 201 and 200 while this service is down: gateway/test/component/mail-routes.test.ts.

jest.setTimeout(120_000);

let n: RunningNotification;
let nc: NatsConnection;
let account: string;
let product: string;

beforeAll(async () => {
  n = await startNotification();
  nc = await connect({ servers: n.t.natsUrl });
  account = n.vendor();
  product = n.product(account, 'Mailed').id;
});

afterAll(async () => {
  await nc?.close();
  await n?.stop();
});

const text = (m: ReceivedMail) => m.parts.find((p) => p.contentType === 'text/plain' && !p.filename)!.body;
const emailsFor = async (key: string) => (await n.emails(account)).filter((e) => e.license_key === key);
const drained = (consumer: string) => consumerDrained(nc, n.t.stream, consumer, MAIL_WAIT);

/**
 * Everything asked so far has been handled: both consumers have read the whole stream, and a later
 * licence's mail (to `address`) has gone out, so the sender has passed any mail queued before it.
 */
async function everythingBefore(address: string): Promise<void> {
  await drained(NOTIFICATION_CREATED_MAIL_CONSUMER);
  await drained(NOTIFICATION_REROLLED_MAIL_CONSUMER);
  await n.licenceCreated(n.issue(account, product, address), true);
  await n.mailTo(address);
}

it('the notification service down: a license.created asking for mail is mailed once the service is back', async () => {
  await n.stopService();
  const licence = n.issue(account, product, 'down-create@example.com');
  try {
    const event = await n.licenceCreated(licence, true);
    expect(event.send_email).toBe(true);
    expect(n.inbox.to('down-create@example.com')).toHaveLength(0);
  } finally {
    await n.startAgain();
  }
  expect(text(await n.mailTo('down-create@example.com'))).toMatch(/[0-9A-Z]{5}-/);
  const [mail] = n.inbox.to('down-create@example.com');
  expect(text(mail)).toContain(licence.key);
  await eventually(async () => expect(await emailsFor(licence.key)).toMatchObject([{ status: 'sent' }]), MAIL_WAIT);
});

it('the notification service down: a license.rerolled asking for mail has the new key mailed once the service is back', async () => {
  const licence = n.issue(account, product, 'down-reroll@example.com');
  await n.licenceCreated(licence);
  const oldKey = licence.key;
  await n.stopService();
  try {
    const event = await n.reroll(licence, true);
    expect(event.send_email).toBe(true);
    expect(licence.key).not.toBe(oldKey);
  } finally {
    await n.startAgain();
  }
  const mail = await n.mailTo('down-reroll@example.com');
  expect(text(mail)).toContain(licence.key);
  expect(text(mail)).not.toContain(oldKey);
  await eventually(async () => expect(await emailsFor(licence.key)).toMatchObject([{ status: 'sent' }]), MAIL_WAIT);
});

it('without send_email the events ask for nothing, and no mail is queued', async () => {
  const licence = n.issue(account, product, 'quiet@example.com');
  const created = await n.licenceCreated(licence);
  const oldKey = licence.key;
  const rerolled = await n.reroll(licence);
  expect(created.send_email).toBeUndefined();
  expect(rerolled.send_email).toBeUndefined();
  await everythingBefore('after-quiet@example.com');
  expect(n.inbox.to('quiet@example.com')).toHaveLength(0);
  expect(await emailsFor(oldKey)).toHaveLength(0);
  expect(await emailsFor(licence.key)).toHaveLength(0);
});

it('the same license.created and license.rerolled delivered twice queue one mail each', async () => {
  const licence = n.issue(account, product, 'twice@example.com');
  const key = licence.key;
  const first = await n.licenceCreated(licence, true);
  await n.mailTo('twice@example.com');
  const second = await n.reroll(licence, true);
  const newKey = licence.key;
  await n.mailTo('twice@example.com', 2);
  const js = nc.jetstream();
  // Published again as new stream messages (no Nats-Msg-Id, so the stream keeps them): the consumers get them again.
  for (const e of [first, second] as DomainEvent[])
    await js.publish(`${n.t.subjectPrefix}.${e.type}`, JSON.stringify(e));
  await everythingBefore('after-twice@example.com');
  expect(n.inbox.to('twice@example.com')).toHaveLength(2);
  expect(await emailsFor(key)).toHaveLength(1);
  expect(await emailsFor(newKey)).toHaveLength(1);
});
