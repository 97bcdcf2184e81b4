import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import {
  AppError,
  Metrics,
  addPostgresIndexes,
  connectMongo,
  createLogger,
  postgresPagesOf,
  syncIndexes,
  usePostgresPages,
  type MailMessage,
  type MailTransport,
} from '@licensing/runtime';
import { Sender, type SenderSettings } from '../../src/jobs/sender';
import { EmailClaimStore, emailClaimModel } from '../../src/store/email-claims';
import { EmailStore, emailModel, queuedPurchaseMail } from '../../src/store/emails';
import { MailCountStore, mailCountModel } from '../../src/store/mail-quota';
import { PortalStore, portalModels } from '../../src/store/portal';
import type { NotificationDeps } from '../../src/use-cases/deps';
import { MailAdmission } from '../../src/use-cases/mail-admission';
import { eventually } from '../../../../test/support/eventually';
import { FakeClock } from '../../../../test/support/fakes/common';

// The mail queue on the run's FerretDB (no atomic updates; sorts done by FerretDB itself): two senders
// racing send each mail once; one account's thousand mails do not hold another's; mail past an
// account's quota is stored deferred, listed, and sent once the quota allows. The services a mail is
// made from are gRPC peers, answered here.

const log = createLogger('mail-queue-test', 'silent');
let db: Connection;
let emails: EmailStore;
let portal: PortalStore;
const clock = new FakeClock('2027-03-01T10:00:00.000Z');
const plans = new Map<string, string>();

/** A transport that sends at once and remembers the order. */
class RecordingTransport implements MailTransport {
  readonly describe = 'recording';
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
  }
  close(): void {}
}

const deps = (): NotificationDeps =>
  ({
    emails,
    portal,
    clock,
    publicBaseUrl: 'https://lic.example',
    accounts: { getAccount: async () => ({ name: 'Acme', support_email: '' }) },
    products: { getProduct: async () => ({ name: 'Pixel' }) },
    licenses: {
      getLicense: async ({ key }: { key: string }) => ({
        key,
        customer_email: `${key.toLowerCase()}@example.com`,
        product_id: 'prod_1',
        expires_at: '',
        status: 'active',
      }),
      issueLicenseFile: async () => {
        throw new AppError('conflict', 'no file');
      },
    },
  }) as unknown as NotificationDeps;

function sender(instance: string, transport: MailTransport, over: Partial<SenderSettings> = {}): Sender {
  const settings: SenderSettings = {
    intervalMs: 60_000,
    timeoutMs: 5000,
    scheduleS: [10],
    maxAgeS: 3 * 86_400,
    fromAddress: 'no-reply@lic.example',
    instance,
    concurrency: 4,
    ...over,
  };
  return new Sender(deps(), transport, clock, log, settings, new Metrics('test'));
}

let n = 0;
/** Stores one purchase mail of the account (judged by its quota); its id. */
async function ask(accountId: string): Promise<string> {
  const key = `KEY-${++n}`;
  const doc = queuedPurchaseMail(
    {
      _id: `eml_${String(n).padStart(8, '0')}`,
      request_key: `r${n}`,
      account_id: accountId,
      to: `${key}@example.com`,
      license_key: key,
    },
    clock.now(),
  );
  expect(await emails.record(doc)).toBe(true);
  return doc._id;
}

const account = (plan: string) => {
  const id = `acct_${randomBytes(6).toString('hex')}`;
  plans.set(id, plan);
  return id;
};

/** The Message-ID names the mail: which mail a sent message was. */
const mailOf = (m: MailMessage) => String(m.messageId).slice(1).split('@')[0];

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_mailq_${randomBytes(3).toString('hex')}`);
  const admission = new MailAdmission(new MailCountStore(mailCountModel(db)), async (id) => plans.get(id) ?? 'free');
  emails = new EmailStore(emailModel(db), new EmailClaimStore(emailClaimModel(db)), admission);
  portal = new PortalStore(portalModels(db));
  await syncIndexes(db);
});

afterAll(async () => {
  await db?.dropDatabase();
  await db?.close();
});

describe('two senders racing', () => {
  it('of claimers taking the same due mail at once, exactly one gets each', async () => {
    const acct = account('enterprise');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await ask(acct));
    const now = clock.now();
    const until = new Date(now.getTime() + 60_000);
    for (const id of ids) {
      const wins = await Promise.all(
        Array.from({ length: 8 }, (_, i) => emails.claim(id, now, until, `host/127.0.0.1:${15000 + i}`)),
      );
      expect(wins.filter(Boolean)).toHaveLength(1);
    }
  });

  it('two sender replicas passing at the same time send each mail once', async () => {
    const acct = account('enterprise');
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) ids.add(await ask(acct));
    const [a, b] = [new RecordingTransport(), new RecordingTransport()];
    const [one, two] = [sender('host-a/127.0.0.1:1', a), sender('host-b/127.0.0.1:2', b)];
    for (let round = 0; round < 4; round++) await Promise.all([one.pass(), two.pass()]);
    const sent = [...a.sent, ...b.sent].map(mailOf).filter((id) => ids.has(id));
    expect(sent.sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await emails.Email.findById(id).lean())?.status).toBe('sent');
  });
});

/**
 * n mails of one account, one after another: asked at once, FerretDB's non-atomic $inc would give many
 * the same turn. A thousand take a while on a busy machine, hence the tests' longer time limit.
 */
async function askMany(acct: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await ask(acct);
}

describe('fair sending', () => {
  it("one account's single mail goes out among the first few, even behind 1,000 of another's", async () => {
    const big = account('enterprise');
    const small = account('free');
    await askMany(big, 1000);
    const mine = await ask(small);
    const transport = new RecordingTransport();
    const s = sender('host-c/127.0.0.1:3', transport);
    await s.pass();
    const order = transport.sent.map(mailOf);
    expect(order.indexOf(mine)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(mine)).toBeLessThan(4);
    // Sent with several in flight, the rest of the big account's mail goes on being sent.
    expect(order.length).toBeGreaterThan(1);
  }, 90_000);

  it('mail asked while a backlog is being sent overtakes it within a pass', async () => {
    const big = account('enterprise');
    const small = account('pro');
    await askMany(big, 300);
    const transport = new RecordingTransport();
    const s = sender('host-d/127.0.0.1:4', transport);
    await s.pass();
    await s.pass();
    const before = transport.sent.length;
    const mine = await ask(small);
    await s.pass();
    const order = transport.sent.map(mailOf);
    expect(order.indexOf(mine) - before).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(mine) - before).toBeLessThan(4);
  }, 90_000);
});

describe('the mail quota', () => {
  it("mails asked at the same moment, the first of an account's window, are all stored", async () => {
    const acct = account('pro');
    const ids = await Promise.all(Array.from({ length: 10 }, () => ask(acct)));
    expect(await emails.Email.countDocuments({ account_id: acct, status: 'queued' })).toBe(ids.length);
  });

  it('stores mail past the hour quota as deferred, lists it so, and sends it when the next hour begins', async () => {
    const acct = account('free'); // 50 an hour
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push(await ask(acct));
    const { items } = await emails.list(acct, { limit: 100, starting_after: '' });
    const statuses = items.map((m) => m.status);
    expect(statuses.filter((x) => x === 'queued')).toHaveLength(50);
    expect(statuses.filter((x) => x === 'deferred')).toHaveLength(3);
    const deferred = items.filter((m) => m.status === 'deferred');
    const hourEnd = new Date(Math.ceil((clock.now().getTime() + 1) / 3_600_000) * 3_600_000);
    for (const m of deferred) expect(m.next_attempt_at).toEqual(hourEnd);
    // The three asked last are the ones deferred.
    expect(deferred.map((m) => m._id).sort()).toEqual(ids.slice(50));

    const transport = new RecordingTransport();
    const s = sender('host-e/127.0.0.1:5', transport);
    await eventually(async () => {
      await s.pass();
      const left = await emails.Email.countDocuments({ account_id: acct, status: 'queued' });
      expect(left).toBe(0);
    });
    const mine = () => transport.sent.map(mailOf).filter((id) => ids.includes(id));
    expect(mine()).toHaveLength(50);
    // Still deferred within the hour, however often the sender looks.
    await s.pass();
    expect(mine()).toHaveLength(50);

    clock.advance(hourEnd.getTime() - clock.now().getTime());
    await s.pass();
    expect(mine().sort()).toEqual(ids.sort());
    for (const id of ids.slice(50)) expect((await emails.Email.findById(id).lean())?.status).toBe('sent');
  });
});

describe('clean-up of ended claims and quota windows', () => {
  // Over FerretDB's PostgreSQL (as the service runs there) the clean-up is one DELETE on the expires_at
  // B-tree; without it (MongoDB) a read of the ended ids, then their deletion. Either way only ended ones go.
  const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
  let own: Connection;
  let claims: EmailClaimStore;
  let counts: MailCountStore;

  beforeAll(async () => {
    own = await connectMongo(process.env.TEST_MONGO_URL!, `t_mailc_${randomBytes(3).toString('hex')}`);
    claims = new EmailClaimStore(emailClaimModel(own));
    counts = new MailCountStore(mailCountModel(own));
    await syncIndexes(own);
    if (postgresUrl) {
      await addPostgresIndexes(own, postgresUrl, log);
      usePostgresPages(own, postgresUrl, log);
    }
  });

  afterAll(async () => {
    await postgresPagesOf(own)?.close();
    await own?.dropDatabase();
    await own?.close();
  });

  it('deletes the claims kept past their day and the ended quota windows, and keeps the others', async () => {
    const now = clock.now();
    const at = (ms: number) => new Date(now.getTime() + ms);
    // A claim is kept CLAIM_KEPT_MS past its end: one ended two days ago, one ends in an hour.
    expect(await claims.insert('eml_old', 1, 'host-a', at(-2 * 86_400_000 - 1))).toBe(true);
    expect(await claims.insert('eml_new', 1, 'host-a', at(3_600_000))).toBe(true);
    await counts.add('acct_old:h:1', 1, at(-1));
    await counts.add('acct_new:h:1', 1, at(60_000));

    expect(await claims.deleteEnded(now)).toBe(1);
    expect(await counts.deleteEnded(now)).toBe(1);
    expect((await claims.Claim.find().lean()).map((c) => c._id)).toEqual(['eml_new:1']);
    expect((await counts.Count.find().lean()).map((c) => c._id)).toEqual(['acct_new:h:1']);
    // The claim kept still holds its number: a sender with an old copy of that mail takes nothing.
    expect(await claims.insert('eml_new', 1, 'host-b', at(0))).toBe(false);
    expect(await claims.deleteEnded(now)).toBe(0);
  });
});
