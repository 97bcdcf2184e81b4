import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { NOTIFICATION_MAIL_CONSUMER, connectMongo, createLogger, syncIndexes, type EventBus } from '@licensing/runtime';
import { MailRequests } from '../../src/events/mail-requests';
import { EmailClaimStore, emailClaimModel } from '../../src/store/email-claims';
import { EmailStore, emailModel } from '../../src/store/emails';
import { MailCountStore, mailCountModel } from '../../src/store/mail-quota';
import { MailAdmission } from '../../src/use-cases/mail-admission';
import { consumerDrained, testEventBus } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { FakeClock } from '../../../../test/support/fakes/common';

// The notification service's durable consumer of purchases on the machine's NATS and the run's FerretDB:
// made for the first time (a new install, or an upgrade to the version that has it), it starts at that
// moment, so past purchases are not mailed; made already, it keeps its position across restarts, so a
// purchase made while the service was down is mailed when it is back.

const log = createLogger('mail-consumer-test', 'silent');
const id = randomBytes(3).toString('hex');
const accountId = `acct_${id}`;
let db: Connection;
let emails: EmailStore;
let bus: EventBus;
let stream: string;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_mailc_${id}`);
  const admission = new MailAdmission(new MailCountStore(mailCountModel(db)), async () => 'enterprise');
  emails = new EmailStore(emailModel(db), new EmailClaimStore(emailClaimModel(db)), admission);
  await syncIndexes(db);
  ({ bus, stream } = await testEventBus({ subjects: `t_mailc_${id}`, stream: `T_MAILC_${id}` }, 'checkout', log));
});

afterAll(async () => {
  await (await bus?.nc.jetstreamManager())?.streams.delete(stream).catch(() => undefined);
  await bus?.close();
  await db?.dropDatabase();
  await db?.close();
});

/** A purchase, as the checkout service publishes it; its time in the stream. */
async function purchase(eventId: string): Promise<Date> {
  const ack = await bus.nc.jetstream().publish(
    bus.subject('checkout.completed'),
    JSON.stringify({
      id: eventId,
      type: 'checkout.completed',
      account_id: accountId,
      created_at: new Date().toISOString(),
      data: {
        checkout: { id: `cs_${eventId}`, product_id: 'prod_1', status: 'complete' },
        license_key: `KEY-${eventId}`,
        customer_email: `${eventId}@example.com`,
      },
    }),
  );
  const stored = await (await bus.nc.jetstreamManager()).streams.getMessage(stream, { seq: ack.seq });
  return stored.time;
}

const mailOf = (eventId: string) => emails.byRequestKey(accountId, eventId);
const consumer = (clock: FakeClock) => new MailRequests(bus, stream, emails, async () => true, clock, log);

it('a new consumer mails no purchase made before it; an existing one keeps its place across a restart', async () => {
  const before = await purchase(`evt_past_${id}`);
  // Deployed a moment after that purchase.
  const deployed = new FakeClock(new Date(before.getTime() + 1).toISOString());
  const first = consumer(deployed);
  await first.start();
  try {
    await purchase(`evt_after_${id}`);
    await eventually(async () => expect(await mailOf(`evt_after_${id}`)).not.toBeNull());
    await consumerDrained(bus.nc, stream, NOTIFICATION_MAIL_CONSUMER);
    expect(await mailOf(`evt_past_${id}`)).toBeNull();
  } finally {
    await first.stop();
  }

  // A purchase while the service is down; it starts again an hour later: its durable remembers where it was.
  await purchase(`evt_down_${id}`);
  const later = new FakeClock(new Date(Date.now() + 3_600_000).toISOString());
  const second = consumer(later);
  await second.start();
  try {
    await eventually(async () => expect(await mailOf(`evt_down_${id}`)).not.toBeNull());
    await consumerDrained(bus.nc, stream, NOTIFICATION_MAIL_CONSUMER);
    expect(await mailOf(`evt_past_${id}`)).toBeNull();
    expect(await emails.Email.countDocuments({ account_id: accountId })).toBe(2);
  } finally {
    await second.stop();
  }
});
