import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { connect } from 'nats';
import {
  createLogger,
  EventBus,
  natsLogins,
  natsServerConfig,
  newEvent,
  runEventsSetup,
  type NatsLogin,
} from '@licensing/runtime';
import { PrivateNats } from '../../../../test/support/nats-server';

// TLS to NATS, as an option: nats-server with the certificate deploy/make-secrets.sh
// makes for it, and the event bus trusting the internal CA (NATS_TLS_CA_FILE).
const secrets = mkdtempSync(join(tmpdir(), 'licensing-test-nats-tls-'));
const passwords = Object.fromEntries(natsLogins.map((u) => [u, randomBytes(12).toString('hex')])) as Record<
  NatsLogin,
  string
>;
const prefix = `t_${randomBytes(3).toString('hex')}.events`;
const stream = `T_TLS_${randomBytes(3).toString('hex')}`;
let nats: PrivateNats;

beforeAll(async () => {
  execFileSync('sh', [join(__dirname, '../../../../deploy/make-secrets.sh')], {
    env: { ...process.env, SECRETS_DIR: secrets },
    stdio: 'ignore',
  });
  nats = await PrivateNats.startWithConfig((port, storeDir) =>
    natsServerConfig({
      prefix,
      stream,
      passwords,
      port,
      storeDir,
      tls: { cert: join(secrets, 'nats.crt'), key: join(secrets, 'nats.key') },
    }),
  );
});

afterAll(async () => {
  await nats?.stop();
  rmSync(secrets, { recursive: true, force: true });
});

it("publishes over TLS as the service's own user, trusting only the internal CA", async () => {
  // The set-up step makes the stream over TLS too, as its own user.
  await runEventsSetup({
    LOG_LEVEL: 'silent',
    NATS_URL: nats.url,
    NATS_USER: 'setup',
    NATS_PASSWORD: passwords.setup,
    NATS_TLS_CA_FILE: join(secrets, 'ca.crt'),
    EVENTS_RETENTION_HOURS: 2,
    EVENTS_SUBJECT_PREFIX: prefix,
    EVENTS_STREAM: stream,
  });
  const bus = await EventBus.connect({
    url: nats.url,
    user: 'license',
    password: passwords.license,
    tlsCaFile: join(secrets, 'ca.crt'),
    retentionHours: 2,
    subjectPrefix: prefix,
    stream,
    name: 'license-service',
    log: createLogger('test', 'silent'),
  });
  try {
    await bus.publish(newEvent('license.created', 'acct_tls', {} as never));
  } finally {
    await bus.close();
  }
});

it('refuses a client that does not speak TLS', async () => {
  await expect(
    connect({ servers: nats.url, user: 'license', pass: passwords.license, reconnect: false, timeout: 2000 }),
  ).rejects.toThrow();
});
