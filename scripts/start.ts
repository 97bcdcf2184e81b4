// `npm start`: the whole system on this machine. Checks NATS and Redis, starts
// FerretDB when nothing answers at MONGO_URL, runs every service and the
// gateway as their own processes, and stops them all cleanly on Ctrl-C.
import { join } from 'node:path';
import { ferretdbBinary, preparePostgres, SQLITE_LIMITS, startFerretDB, type FerretDB } from './lib/ferretdb';
import { launchSystem } from './lib/launch';
import { hostPort, portAnswers } from './lib/net';
import { repoRoot } from './lib/paths';
import { localSecrets } from './lib/secrets';
import { writeFileSync, mkdirSync } from 'node:fs';
import { scrubSecrets } from '@licensing/runtime';

const env = process.env;
const root = repoRoot();
const dataDir = env.DATA_DIR ?? join(root, '.data');

function fail(message: string): never {
  console.error(`\n${message}\n`);
  process.exit(1);
}

async function main() {
  const nodeEnv = (env.NODE_ENV ?? 'development') as 'development' | 'production' | 'test';
  const host = env.HOST ?? '127.0.0.1';
  const port = Number(env.PORT ?? 8080);
  const mongoUrl = env.MONGO_URL ?? 'mongodb://127.0.0.1:27017';
  const natsUrl = env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';

  const nats = hostPort(natsUrl, 4222);
  if (!(await portAnswers(nats.host, nats.port)))
    fail(`NATS is not reachable at ${natsUrl}. Start nats-server with JetStream (nats-server -js) or set NATS_URL.`);
  const redis = hostPort(redisUrl, 6379);
  if (!(await portAnswers(redis.host, redis.port)))
    fail(`Redis is not reachable at ${scrubSecrets(redisUrl)}. Start redis-server or set REDIS_URL.`);

  let ferret: FerretDB | undefined;
  const mongo = hostPort(mongoUrl, 27017);
  if (!(await portAnswers(mongo.host, mongo.port))) {
    if (!['127.0.0.1', 'localhost', '::1'].includes(mongo.host))
      fail(
        `Nothing answers at MONGO_URL=${scrubSecrets(mongoUrl)}, and FerretDB can only be started here for a loopback address.`,
      );
    try {
      ferretdbBinary();
      // Over PostgreSQL when one answers: indexed look-ups at 100,000 licences. SQLite otherwise.
      const postgres = await preparePostgres(env.FERRETDB_POSTGRES_DATABASE ?? 'licensing', { fresh: false });
      if (postgres)
        console.log(`Starting FerretDB over PostgreSQL (database ${postgres.name}) on port ${mongo.port}...`);
      else
        console.log(
          `Starting FerretDB over SQLite (data in ${join(dataDir, 'ferretdb')}) on port ${mongo.port}. ${SQLITE_LIMITS}`,
        );
      ferret = await startFerretDB({ port: mongo.port, dataDir: join(dataDir, 'ferretdb'), postgres });
    } catch (err) {
      fail(`Could not start FerretDB: ${(err as Error).message}`);
    }
  }

  let secrets = {
    internal_token: env.INTERNAL_TOKEN ?? '',
    api_key_pepper: env.API_KEY_PEPPER ?? '',
    signing_key_secret: env.SIGNING_KEY_SECRET ?? '',
    webhook_secret_key: env.WEBHOOK_SECRET_KEY ?? '',
  };
  if (Object.values(secrets).some((v) => !v)) {
    if (nodeEnv === 'production')
      fail(
        'In production, set INTERNAL_TOKEN, API_KEY_PEPPER, SIGNING_KEY_SECRET and WEBHOOK_SECRET_KEY in the environment.',
      );
    secrets = {
      ...localSecrets(join(dataDir, 'secrets.json')),
      ...Object.fromEntries(Object.entries(secrets).filter(([, v]) => v)),
    };
  }

  const ports = {
    account: Number(env.ACCOUNT_GRPC_PORT ?? 50051),
    product: Number(env.PRODUCT_GRPC_PORT ?? 50052),
    license: Number(env.LICENSE_GRPC_PORT ?? 50053),
    checkout: Number(env.CHECKOUT_GRPC_PORT ?? 50054),
    checkoutHttp: Number(env.CHECKOUT_HTTP_PORT ?? 8081),
    webhook: Number(env.WEBHOOK_GRPC_PORT ?? 50055),
    gateway: port,
  };
  for (const [name, p] of Object.entries(ports)) {
    if (await portAnswers(host, p, 300))
      fail(
        `Port ${p} (${name}) is already in use on ${host}. Is the system already running? Set ${name === 'gateway' ? 'PORT' : `${name.toUpperCase()}_GRPC_PORT`} to use another.`,
      );
  }
  // Prometheus listeners: each service on its gRPC port + 1000, the gateway on 9464.
  const metricsPorts = {
    gateway: 9464,
    account: ports.account + 1000,
    product: ports.product + 1000,
    license: ports.license + 1000,
    checkout: ports.checkout + 1000,
    webhook: ports.webhook + 1000,
  };
  for (const [name, p] of Object.entries(metricsPorts)) {
    if (await portAnswers(host, p, 300))
      fail(`Port ${p} (${name} /metrics) is already in use on ${host}. Is the system already running?`);
  }

  const logDir = join(dataDir, 'logs');
  const system = await launchSystem(
    {
      mongoUrl,
      ferretdbPostgresUrl: ferret?.postgres?.url,
      natsUrl,
      redisUrl,
      rateLimitPrefix: env.RATE_LIMIT_PREFIX ?? 'licensing:rl',
      dbPrefix: env.DB_PREFIX ?? 'licensing',
      subjectPrefix: env.EVENTS_SUBJECT_PREFIX ?? 'licensing.events',
      stream: env.EVENTS_STREAM ?? 'LICENSING_EVENTS',
      internalToken: secrets.internal_token,
      apiKeyPepper: secrets.api_key_pepper,
      signingKeySecret: secrets.signing_key_secret,
      webhookSecretKey: secrets.webhook_secret_key,
      host,
      // Sign-up links are written to .data/mail unless a mail server is given (README: "Sign-up mail").
      mailUrl: env.MAIL_URL ?? (nodeEnv === 'production' ? undefined : `dir://${join(dataDir, 'mail')}`),
      nodeEnv,
      logLevel: env.LOG_LEVEL ?? 'info',
    },
    ports,
    logDir,
  ).catch(async (err: Error) => {
    await ferret?.stop();
    fail(err.message);
  });

  // Where the operator CLI finds the running account service.
  mkdirSync(join(dataDir, 'run'), { recursive: true });
  writeFileSync(
    join(dataDir, 'run', 'stack.json'),
    JSON.stringify({ account_grpc_addr: system.addrs.account, pid: process.pid }, null, 2),
  );

  console.log(`Gateway listening at ${system.gatewayUrl} (API reference: ${system.gatewayUrl}/docs)`);
  console.log(
    `Metrics: http://${host}:${metricsPorts.gateway}/metrics (gateway), ports ${metricsPorts.account}-${metricsPorts.webhook} (services)`,
  );
  if (!env.MAIL_URL && nodeEnv !== 'production')
    console.log(
      `Dashboard sign-up: ${system.gatewayUrl}/dashboard/signup; its e-mails (with the confirmation link) are files in ${join(dataDir, 'mail')}`,
    );
  console.log(
    `Logs: ${logDir}. First API key: npm run admin -- create-account --name "Acme"   (Ctrl-C stops everything)`,
  );

  let exiting = false;
  const shutdown = async (code: number) => {
    if (exiting) return;
    exiting = true;
    console.log('Stopping...');
    await system.stop();
    await ferret?.stop();
    console.log('Stopped.');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  system.crashed.then(({ name, code }) => {
    console.error(`${name} exited unexpectedly (code ${code}); see ${join(logDir, `${name}.log`)}. Stopping the rest.`);
    void shutdown(1);
  });
}

main().catch((err: Error) => fail(err.stack ?? err.message));
