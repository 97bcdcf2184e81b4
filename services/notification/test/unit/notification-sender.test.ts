import { AppError, Metrics, createLogger, type MailMessage, type MailTransport } from '@licensing/runtime';
import { PASS_SIZE, Sender, claimMsFor, type SenderSettings } from '../../src/jobs/sender';
import { queuedMail, queuedPurchaseMail, type EmailDoc } from '../../src/store/emails';
import type { NotificationDeps } from '../../src/use-cases/deps';
import { eventually } from '../../../../test/support/eventually';
import { FakeClock } from '../../../../test/support/fakes/common';
import { FakeEmailStore, FakePortalStore } from '../../../../test/support/fakes/notification-stores';

// The mail sender over an in-memory queue and a transport the test answers by hand: what a stop does to
// the mail in hand and to the rest (a graceful shutdown loses nothing, and waits no longer than
// its budget), what a failed attempt leaves in the log, and what a sign-in that was never confirmed leaves.

const HOUR = 3_600_000;

/** A transport whose sends wait until the test answers them. */
class HandTransport implements MailTransport {
  readonly describe = 'by hand';
  readonly sent: MailMessage[] = [];
  private readonly waiting: { answer(err?: Error): void }[] = [];
  /** Sends taken so far (answered or not). */
  started = 0;

  send(message: MailMessage): Promise<void> {
    this.started++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({
        answer: (err) => {
          if (err) return reject(err);
          this.sent.push(message);
          resolve();
        },
      });
    });
  }

  /** Answers the oldest send still waiting. */
  answer(err?: Error): void {
    const next = this.waiting.shift();
    if (!next) throw new Error('no send is waiting');
    next.answer(err);
  }

  close(): void {}
}

/** Resolves once `check` holds (the sender's awaits run in between): the shared poll. */
const until = (check: () => boolean) =>
  eventually(() => expect(check()).toBe(true), { timeoutMs: 2000, intervalMs: 2 });

interface Licence {
  key: string;
  customer_email: string;
  product_id: string;
  expires_at: string;
}

function setUp(over: Partial<SenderSettings> = {}) {
  const emails = new FakeEmailStore();
  const clock = new FakeClock('2027-01-01T10:00:00.000Z');
  const licences = new Map<string, Licence>();
  /** The licence look-up: the test may make it hang or fail. */
  let lookup: (key: string) => Promise<Licence> = async (key) => {
    const l = licences.get(key);
    if (!l) throw AppError.notFound('licence');
    return l;
  };
  const holders = new Set<string>();
  let listing: (email: string) => Promise<{ holds: boolean }> = async (email) => ({ holds: holders.has(email) });
  const deps = {
    emails: emails.asStore(),
    portal: new FakePortalStore().asStore(),
    clock,
    publicBaseUrl: 'https://lic.example',
    accounts: { getAccount: async () => ({ name: 'Acme', support_email: '' }) },
    products: { getProduct: async () => ({ name: 'Pixel' }) },
    licenses: {
      getLicense: ({ key }: { key: string }) => lookup(key),
      issueLicenseFile: async () => {
        throw new AppError('conflict', 'no file');
      },
      holdsLicences: ({ email }: { email: string }) => listing(email),
    },
  } as unknown as NotificationDeps;
  const transport = new HandTransport();
  const settings: SenderSettings = {
    intervalMs: 60_000,
    timeoutMs: 5000,
    scheduleS: [10, 60],
    maxAgeS: 3 * 86_400,
    fromAddress: 'no-reply@lic.example',
    instance: 'host-a/127.0.0.1:15056',
    concurrency: 1,
    ...over,
  };
  const sender = new Sender(deps, transport, clock, createLogger('test', 'silent'), settings, new Metrics('test'));
  let n = 0;
  const queuePurchase = async (to: string, customerEmail = to) => {
    const key = `KEY-${++n}`;
    licences.set(key, { key, customer_email: customerEmail, product_id: 'prod_1', expires_at: '' });
    const doc = queuedPurchaseMail(
      { _id: `eml_${String(n).padStart(3, '0')}`, request_key: `r${n}`, account_id: 'acct_1', to, license_key: key },
      clock.now(),
    );
    await emails.record(doc);
    return doc._id;
  };
  const queueSignIn = async (to: string) => {
    const id = `eml_${String(++n).padStart(3, '0')}`;
    await emails.record(
      queuedMail(
        'portal_link',
        { _id: id, request_key: `p${n}`, account_id: 'acct_1', to, license_key: '' },
        clock.now(),
      ),
    );
    return id;
  };
  return {
    emails,
    clock,
    transport,
    sender,
    holders,
    queuePurchase,
    queueSignIn,
    row: (id: string) => emails.rows.get(id) as EmailDoc,
    hangLookups() {
      const previous = lookup;
      lookup = () => new Promise<Licence>(() => undefined);
      return () => {
        lookup = previous;
      };
    },
    failListing(err: Error) {
      listing = async () => {
        throw err;
      };
    },
    answerListing() {
      listing = async (email) => ({ holds: holders.has(email) });
    },
  };
}

describe('a stop', () => {
  it('takes no further mail once it begins: the send in hand finishes and is recorded, the rest stay due and unclaimed', async () => {
    const s = setUp();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await s.queuePurchase(`buyer${i}@example.com`));
    const pass = s.sender.pass();
    await until(() => s.transport.started === 1);
    s.sender.beginStop();
    s.transport.answer();
    expect(await pass).toBe(3);
    expect(s.transport.started).toBe(1);
    expect(s.transport.sent.map((m) => m.to)).toEqual(['buyer0@example.com']);
    expect(s.row(ids[0])).toMatchObject({ status: 'sent', attempts: 1 });
    for (const id of ids.slice(1)) {
      expect(s.row(id)).toMatchObject({ status: 'queued', attempts: 0, next_attempt_at: s.clock.now() });
      expect(s.row(id).claimed_by).toBeUndefined();
    }
    // Stopped for good: no pass takes anything any more.
    expect(await s.sender.pass()).toBe(0);
    await s.sender.stop();
    expect(s.transport.started).toBe(1);
  });

  it('gives back a mail whose look-ups are still running: unsent, due again at once, without waiting for them', async () => {
    const s = setUp();
    const id = await s.queuePurchase('slow@example.com');
    s.hangLookups();
    const pass = s.sender.pass();
    await until(() => s.row(id).claimed_by === 'host-a/127.0.0.1:15056');
    expect(s.row(id).next_attempt_at!.getTime()).toBe(s.clock.now().getTime() + claimMsFor(5000));
    await s.sender.stop();
    await pass;
    expect(s.transport.started).toBe(0);
    expect(s.row(id)).toMatchObject({
      status: 'queued',
      attempts: 0,
      last_error: null,
      next_attempt_at: s.clock.now(),
    });
  });

  it('waits for a send that never answers no longer than the send timeout, which records a failed attempt to retry', async () => {
    const s = setUp({ timeoutMs: 60 });
    const id = await s.queuePurchase('hang@example.com');
    const pass = s.sender.pass();
    await until(() => s.transport.started === 1);
    const began = Date.now();
    await s.sender.stop();
    expect(Date.now() - began).toBeLessThan(2000);
    await pass;
    expect(s.row(id)).toMatchObject({
      status: 'queued',
      attempts: 1,
      last_error: 'the SMTP server did not answer in time',
      next_attempt_at: new Date(s.clock.now().getTime() + 10_000),
    });
  });

  it("a new start of the same instance releases the claims its killed process held; another instance's stay", async () => {
    const s = setUp();
    const mine = await s.queuePurchase('mine@example.com');
    const theirs = await s.queuePurchase('theirs@example.com');
    const later = new Date(s.clock.now().getTime() + claimMsFor(5000));
    await s.emails.claim(mine, s.clock.now(), later, 'host-a/127.0.0.1:15056');
    await s.emails.claim(theirs, s.clock.now(), later, 'host-b/127.0.0.1:15056');
    await s.sender.start();
    try {
      expect(s.row(mine).next_attempt_at).toEqual(s.clock.now());
      expect(s.row(theirs).next_attempt_at).toEqual(later);
    } finally {
      await s.sender.stop();
    }
  });
});

describe('a failed attempt', () => {
  it('is retried by the schedule, then at its last wait, until the maximum age; then failed, saying why', async () => {
    const s = setUp({ maxAgeS: 3 * 3600 });
    const id = await s.queuePurchase('away@example.com');
    const attempt = async () => {
      const pass = s.sender.pass();
      await until(() => s.transport.started > 0);
      s.transport.started = 0;
      s.transport.answer(new Error('451 try later'));
      await pass;
      if (s.row(id).status === 'queued')
        s.clock.advance(s.row(id).next_attempt_at!.getTime() - s.clock.now().getTime());
    };
    for (let i = 0; i < 4; i++) await attempt();
    // 10 s, 60 s, then 60 s again and again.
    expect(s.row(id)).toMatchObject({ status: 'queued', attempts: 4, last_error: '451 try later' });
    while (s.row(id).status === 'queued') await attempt();
    expect(s.row(id).status).toBe('failed');
    expect(s.row(id).last_error).toBe(
      `not sent within MAIL_MAX_AGE_S (3 hours) after ${s.row(id).attempts} attempts; given up; the last error: 451 try later`,
    );
    // The last attempt was made at the maximum age itself.
    expect(s.clock.now().getTime()).toBe(s.row(id).created_at.getTime() + 3 * HOUR);
  });

  it('to a customer erased since the mail was asked sends nothing: failed at once, the log keeps the placeholder', async () => {
    const s = setUp();
    const id = await s.queuePurchase('late@example.com', 'erased-00ff@erased.invalid');
    await s.sender.pass();
    expect(s.transport.started).toBe(0);
    expect(s.row(id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      to: 'erased-00ff@erased.invalid',
      last_error: 'the customer was erased',
      next_attempt_at: null,
    });
  });
});

describe('a sign-in request', () => {
  it('stays unconfirmed while the licence service cannot say whether the address is a customer; confirmed once it says so', async () => {
    const s = setUp();
    s.holders.add('holder@example.com');
    const id = await s.queueSignIn('holder@example.com');
    expect(s.row(id).recipient_confirmed).toBe(false);
    s.failListing(new AppError('service_unavailable', 'the licence service is not answering'));
    await s.sender.pass();
    expect(s.row(id)).toMatchObject({ status: 'queued', attempts: 1, recipient_confirmed: false });
    s.answerListing();
    s.clock.advance(10_000);
    const pass = s.sender.pass();
    await until(() => s.transport.started === 1);
    expect(s.row(id).recipient_confirmed).toBe(true);
    s.transport.answer();
    await pass;
    expect(s.row(id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('never confirmed when it is given up: deleted, no trace left', async () => {
    const s = setUp({ maxAgeS: 60 });
    const id = await s.queueSignIn('someone@example.com');
    s.failListing(new AppError('service_unavailable', 'the licence service is not answering'));
    await s.sender.pass();
    expect(s.row(id).attempts).toBe(1);
    s.clock.advance(60_000);
    await s.sender.pass();
    expect(s.emails.rows.has(id)).toBe(false);
  });

  it('five links go to one address within an hour, then requests send nothing until an hour after the first; requests that send nothing count nothing', async () => {
    const s = setUp();
    s.holders.add('holder@example.com');
    // A stranger's address asked for many times: nothing goes out, and nothing is counted against anyone.
    for (let i = 0; i < 8; i++) await s.queueSignIn('stranger@example.com');
    await s.sender.pass();
    expect(s.transport.started).toBe(0);
    const send = async () => {
      const id = await s.queueSignIn('holder@example.com');
      const before = s.transport.started;
      const pass = s.sender.pass();
      await until(() => s.transport.started === before + 1 || !s.emails.rows.has(id));
      if (s.transport.started > before) s.transport.answer();
      await pass;
      s.clock.advance(60_000);
      return s.emails.rows.get(id)?.status ?? 'dropped';
    };
    for (let i = 0; i < 5; i++) expect(await send()).toBe('sent');
    expect(await send()).toBe('dropped');
    expect(s.transport.sent).toHaveLength(5);
    // An hour after the first link, one may go out again.
    s.clock.advance(3_600_000 - 6 * 60_000);
    expect(await send()).toBe('sent');
  });

  it('for an address that holds no licence is deleted unsent', async () => {
    const s = setUp();
    const id = await s.queueSignIn('stranger@example.com');
    await s.sender.pass();
    expect(s.emails.rows.has(id)).toBe(false);
    expect(s.transport.started).toBe(0);
  });
});

it('a pass takes at most PASS_SIZE mails', async () => {
  const s = setUp({ timeoutMs: 5000 });
  for (let i = 0; i < PASS_SIZE + 2; i++) await s.queuePurchase(`many${i}@example.com`);
  const pass = s.sender.pass();
  for (let i = 0; i < PASS_SIZE; i++) {
    await until(() => s.transport.started === i + 1);
    s.transport.answer();
  }
  expect(await pass).toBe(PASS_SIZE);
  expect(s.transport.sent).toHaveLength(PASS_SIZE);
});
