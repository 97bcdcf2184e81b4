import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { AccountServiceClient } from '@licensing/proto';
import { connectMongo, createClient } from '@licensing/runtime';
import { start } from '../../src/main';
import { mailerFor } from '../../src/mail/mailer';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { freePort } from '../../../../scripts/lib/net';
import { testTopology } from '../../../../test/support/stack';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { eventually } from '../../../../test/support/eventually';

// Sign-up mail leaves through real transports: an SMTP server (smtp-server, as
// a mail relay would be) and a folder; without a transport, sign-up is closed.

const mail = {
  to: 'owner@example.com',
  subject: 'Confirm your e-mail',
  text: 'open https://licensing.example/dashboard/signup/confirm?token=abc',
};

describe('SMTP', () => {
  let server: SMTPServer;
  let port: number;
  const received: { from: string; to: string[]; raw: string }[] = [];

  beforeAll(async () => {
    port = await freePort();
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, done) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
          });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers the mail to the SMTP server, from MAIL_FROM to the owner', async () => {
    const mailer = mailerFor(`smtp://127.0.0.1:${port}`, 'Licensing <no-reply@licensing.example>')!;
    expect(mailer.describe).toBe(`smtp://127.0.0.1:${port}`);
    await mailer.send(mail);
    await eventually(() => expect(received).toHaveLength(1));
    expect(received[0]).toMatchObject({ from: 'no-reply@licensing.example', to: ['owner@example.com'] });
    expect(received[0].raw).toContain('Subject: Confirm your e-mail');
    expect(received[0].raw).toContain('signup/confirm?token=abc');
  });

  it('a server that cannot be reached is a 503-style error that names no host or user', async () => {
    const closed = await freePort();
    const mailer = mailerFor(`smtp://relay-user:relay-pass@127.0.0.1:${closed}`, 'x@example.com')!;
    expect(mailer.describe).not.toContain('relay-pass');
    const err = await mailer.send(mail).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(err).toMatchObject({ code: 'service_unavailable' });
    expect(err!.message).not.toMatch(/127\.0\.0\.1|relay-user|relay-pass/);
  });
});

it('a folder transport writes each mail whole, as JSON readable only by its owner', async () => {
  const dir = join(tmpdir(), `licensing-mail-test-${randomBytes(3).toString('hex')}`);
  try {
    await mailerFor(`dir://${dir}`, 'x@example.com')!.send(mail);
    const [name, ...rest] = await readdir(dir);
    expect(rest).toEqual([]); // no temporary file left behind
    expect(JSON.parse(await readFile(join(dir, name), 'utf8'))).toEqual(mail);
    expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('refuses a MAIL_URL it cannot use, and closes sign-up without one', async () => {
  expect(() => mailerFor('http://mail.example', 'x@example.com')).toThrow(
    'MAIL_URL must start with smtp://, smtps:// or dir://',
  );
  const t = testTopology({ mailUrl: undefined });
  await setUpEvents(t);
  const service = await start({ env: envFor('account', t, { port: 0 }) });
  // Sign-up is the web component's (the dashboard's form).
  const accounts = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'web'));
  try {
    await expect(
      accounts.call.signUp({
        account_name: 'Closed Co',
        email: 'closed@example.com',
        password: 'a long enough passphrase',
      }),
    ).rejects.toMatchObject({
      code: 'forbidden',
      message: 'sign-up is closed on this server; ask its operator for an account',
    });
    // Read with the test's own connection: the service records the query shapes it sends, and this one is the test's.
    const db = await connectMongo(t.mongoUrl, `${t.dbPrefix}_account`);
    try {
      expect(await db.collection('pending_signups').countDocuments({})).toBe(0);
    } finally {
      await db.close();
    }
  } finally {
    accounts.close();
    await service.ctx.db.dropDatabase();
    await service.stop();
  }
});
