import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startFerretDB } from '../../scripts/lib/ferretdb';
import { freePort, hostPort, portAnswers } from '../../scripts/lib/net';

// Starts what the tests need and is missing. Every run gets its own FerretDB
// (random port, temporary data folder) unless TEST_MONGO_URL names a server
// that answers; NATS and Redis are the machine's, isolated by per-run names
// and key prefixes.
export default async function globalSetup(): Promise<void> {
  process.env.TEST_RUN_ID ??= randomBytes(4).toString('hex');
  const nats = hostPort(process.env.NATS_URL ?? 'nats://127.0.0.1:4222', 4222);
  if (!(await portAnswers(nats.host, nats.port))) {
    throw new Error(`NATS is not reachable at ${nats.host}:${nats.port}: start nats-server with JetStream (-js) or set NATS_URL`);
  }
  const redis = hostPort(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 6379);
  if (!(await portAnswers(redis.host, redis.port))) {
    throw new Error(`Redis is not reachable at ${redis.host}:${redis.port}: start redis-server or set REDIS_URL`);
  }
  const given = process.env.TEST_MONGO_URL;
  if (given) {
    const { host, port } = hostPort(given, 27017);
    if (await portAnswers(host, port)) return;
    throw new Error(`TEST_MONGO_URL=${given} does not answer`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'licensing-test-ferretdb-'));
  const ferret = await startFerretDB({ port: await freePort(), dataDir, log: (l) => process.stderr.write(`${l}\n`) });
  process.env.TEST_MONGO_URL = ferret.url;
  (globalThis as Record<string, unknown>).__ferret = { ferret, dataDir };
}
