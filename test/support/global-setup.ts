import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { preparePostgres, startFerretDB } from '../../scripts/lib/ferretdb';
import { startStripeMock } from '../../scripts/lib/stripe-mock';
import { buildSeaweedfsInBackground } from '../../scripts/lib/seaweedfs';
import { freePort, hostPort, portAnswers } from '../../scripts/lib/net';
import { stopOrphanedSharedStacks } from './shared-stack-handles';

// Starts what the tests need and is missing. Every run gets its own FerretDB
// (random port; over PostgreSQL in a database of its own when PostgreSQL
// answers, else over SQLite in a temporary folder; TEST_STORE=sqlite forces
// SQLite) unless TEST_MONGO_URL names a server that answers, and its own
// stripe-mock unless TEST_STRIPE_MOCK_URL names one; NATS and Redis are the
// machine's, isolated by per-run names and key prefixes. SeaweedFS (the S3
// store) is only built here, once per machine and in the background: the tests
// that need one wait for it and start their own (scripts/lib/seaweedfs.ts).
export default async function globalSetup(): Promise<void> {
  process.env.TEST_RUN_ID ??= randomBytes(4).toString('hex');
  await stopOrphanedSharedStacks();
  const nats = hostPort(process.env.NATS_URL ?? 'nats://127.0.0.1:4222', 4222);
  if (!(await portAnswers(nats.host, nats.port))) {
    throw new Error(
      `NATS is not reachable at ${nats.host}:${nats.port}: start nats-server with JetStream (-js) or set NATS_URL`,
    );
  }
  const redis = hostPort(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 6379);
  if (!(await portAnswers(redis.host, redis.port))) {
    throw new Error(`Redis is not reachable at ${redis.host}:${redis.port}: start redis-server or set REDIS_URL`);
  }
  // Built meanwhile (minutes on a fresh machine): only the tests of the S3 store wait for it, and the
  // sequencer starts them last.
  buildSeaweedfsInBackground((l) => process.stderr.write(`${l}\n`));
  await startStripeMockIfMissing();
  const given = process.env.TEST_MONGO_URL;
  if (given) {
    const { host, port } = hostPort(given, 27017);
    if (await portAnswers(host, port)) return;
    throw new Error(`TEST_MONGO_URL=${given} does not answer`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'licensing-test-ferretdb-'));
  // Over PostgreSQL when one answers (as on CI), in a database of this run's own; else over SQLite.
  const postgres =
    process.env.TEST_STORE === 'sqlite'
      ? null
      : await preparePostgres(`licensing_test_${process.env.TEST_RUN_ID}`, { fresh: true });
  const ferret = await startFerretDB({
    port: await freePort(),
    dataDir,
    postgres,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  process.env.TEST_MONGO_URL = ferret.url;
  if (postgres) process.env.TEST_FERRETDB_POSTGRESQL_URL = postgres.url;
  (globalThis as Record<string, unknown>).__ferret = { ferret, dataDir };
}

/** stripe-mock for the Stripe checkout tests: the SDK is pointed at TEST_STRIPE_MOCK_URL. */
async function startStripeMockIfMissing(): Promise<void> {
  const given = process.env.TEST_STRIPE_MOCK_URL;
  if (given) {
    const { host, port } = hostPort(given, 12111);
    if (await portAnswers(host, port)) return;
    throw new Error(`TEST_STRIPE_MOCK_URL=${given} does not answer`);
  }
  const mock = await startStripeMock({ port: await freePort(), log: (l) => process.stderr.write(`${l}\n`) });
  process.env.TEST_STRIPE_MOCK_URL = mock.url;
  (globalThis as Record<string, unknown>).__stripeMock = mock;
}
