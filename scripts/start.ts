// `npm start`: the whole system on this machine. Checks NATS and Redis, starts
// FerretDB when nothing answers at MONGO_URL, runs every service and the
// gateway as their own processes, and stops them all cleanly on Ctrl-C.
import { join } from 'node:path';
import { ferretdbBinary, preparePostgres, SQLITE_LIMITS, startFerretDB, type FerretDB } from './lib/ferretdb';
import { launchSystem, type Ports } from './lib/launch';
import { components, gateway, httpPortVariable, portVariable } from './lib/components';
import { metricsPortOf } from './lib/topology';
import { hostPort, portAnswers } from './lib/net';
import { repoRoot } from './lib/paths';
import { localSecrets } from './lib/secrets';
import { writeFileSync, mkdirSync } from 'node:fs';
import { natsServers, scrubSecrets } from '@licensing/runtime';

const env = process.env;
const root = repoRoot();
const dataDir = env.DATA_DIR ?? join(root, '.data');

function fail(message: string): never {
  console.error(`\n${message}\n`);
  process.exit(1);
}

type Settings = ReturnType<typeof settings>;
type System = Awaited<ReturnType<typeof launchSystem>>;
type Secrets = ReturnType<typeof localSecrets>;

/** Where the system's infrastructure is and how it runs, from the environment. */
function settings() {
  const nodeEnv = (env.NODE_ENV ?? 'development') as 'development' | 'production' | 'test';
  return {
    nodeEnv,
    host: env.HOST ?? '127.0.0.1',
    mongoUrl: env.MONGO_URL ?? 'mongodb://127.0.0.1:27017',
    natsUrl: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    logDir: join(dataDir, 'logs'),
    allowLoopbackWebhooks: nodeEnv !== 'production' && env.WEBHOOK_ALLOW_LOOPBACK !== 'false',
  };
}

/** NATS and Redis must already run: `npm start` does not start them. */
async function checkNatsAndRedis({ natsUrl, redisUrl }: Settings) {
  // NATS_URL may name every node of a cluster (comma-separated): one that answers is enough to start.
  const natsAnswers = await Promise.all(
    natsServers(natsUrl).map((url) => {
      const nats = hostPort(url, 4222);
      return portAnswers(nats.host, nats.port);
    }),
  );
  if (!natsAnswers.some(Boolean))
    fail(`NATS is not reachable at ${natsUrl}. Start nats-server with JetStream (nats-server -js) or set NATS_URL.`);
  const redis = hostPort(redisUrl, 6379);
  if (!(await portAnswers(redis.host, redis.port)))
    fail(`Redis is not reachable at ${scrubSecrets(redisUrl)}. Start redis-server or set REDIS_URL.`);
}

/** FerretDB, started here when nothing answers at MONGO_URL (a loopback address only); undefined when one answers. */
async function startStoreUnlessRunning({ mongoUrl }: Settings): Promise<FerretDB | undefined> {
  const mongo = hostPort(mongoUrl, 27017);
  if (await portAnswers(mongo.host, mongo.port)) return undefined;
  if (!['127.0.0.1', 'localhost', '::1'].includes(mongo.host))
    fail(
      `Nothing answers at MONGO_URL=${scrubSecrets(mongoUrl)}, and FerretDB can only be started here for a loopback address.`,
    );
  try {
    ferretdbBinary();
    // Over PostgreSQL when one answers: indexed look-ups at 100,000 licences. SQLite otherwise.
    const postgres = await preparePostgres(env.FERRETDB_POSTGRES_DATABASE ?? 'licensing', { fresh: false });
    if (postgres) console.log(`Starting FerretDB over PostgreSQL (database ${postgres.name}) on port ${mongo.port}...`);
    else
      console.log(
        `Starting FerretDB over SQLite (data in ${join(dataDir, 'ferretdb')}) on port ${mongo.port}. ${SQLITE_LIMITS}`,
      );
    return await startFerretDB({ port: mongo.port, dataDir: join(dataDir, 'ferretdb'), postgres });
  } catch (err) {
    fail(`Could not start FerretDB: ${(err as Error).message}`);
  }
}

/** The system's secrets from the environment; outside production, those missing from .data/secrets.json. */
function systemSecrets({ nodeEnv }: Settings): Secrets {
  const secrets = {
    internal_token: env.INTERNAL_TOKEN ?? '',
    api_key_pepper: env.API_KEY_PEPPER ?? '',
    signing_key_secret: env.SIGNING_KEY_SECRET ?? '',
    webhook_secret_key: env.WEBHOOK_SECRET_KEY ?? '',
  };
  if (!Object.values(secrets).some((v) => !v)) return secrets;
  if (nodeEnv === 'production')
    fail(
      'In production, set INTERNAL_TOKEN, API_KEY_PEPPER, SIGNING_KEY_SECRET and WEBHOOK_SECRET_KEY in the environment.',
    );
  return {
    ...localSecrets(join(dataDir, 'secrets.json')),
    ...Object.fromEntries(Object.entries(secrets).filter(([, v]) => v)),
  };
}

/** Every component's ports (and its metrics port), each checked free; a port in use stops the start. */
async function freePorts({ host }: Settings) {
  // Every component on its default port (components.json) unless its variable moves it.
  const ports: Ports = {};
  for (const c of components) {
    ports[c.name] = {
      port: Number(env[portVariable(c)] ?? (c.kind === 'service' ? c.ports.grpc : c.ports.http)),
      ...(c.kind === 'service' && c.ports.http ? { http: Number(env[httpPortVariable(c)] ?? c.ports.http) } : {}),
    };
  }
  for (const c of components) {
    const { port, http } = ports[c.name];
    if (await portAnswers(host, port, 300))
      fail(
        `Port ${port} (${c.name}) is already in use on ${host}. Is the system already running? Set ${portVariable(c)} to use another.`,
      );
    if (http !== undefined && (await portAnswers(host, http, 300)))
      fail(
        `Port ${http} (${c.name} web page) is already in use on ${host}. Set ${httpPortVariable(c)} to use another.`,
      );
  }
  // Prometheus listeners: each service on its gRPC port + 1000, the gateway and the web component on their own.
  const metricsPorts = Object.fromEntries(components.map((c) => [c.name, metricsPortOf(c.name, ports[c.name].port)]));
  for (const [name, p] of Object.entries(metricsPorts)) {
    if (await portAnswers(host, p, 300))
      fail(`Port ${p} (${name} /metrics) is already in use on ${host}. Is the system already running?`);
  }
  return { ports, metricsPorts };
}

/** Every service and the gateway as their own processes; a failed start stops the FerretDB started here. */
function launch(s: Settings, ferret: FerretDB | undefined, secrets: Secrets, ports: Ports): Promise<System> {
  return launchSystem(
    {
      mongoUrl: s.mongoUrl,
      // Release files under .data/artifacts unless ARTIFACT_STORE_URL names an S3-compatible store.
      dataDir,
      artifactStoreUrl: env.ARTIFACT_STORE_URL,
      ferretdbPostgresUrl: ferret?.postgres?.url,
      natsUrl: s.natsUrl,
      redisUrl: s.redisUrl,
      rateLimitPrefix: env.RATE_LIMIT_PREFIX ?? 'licensing:rl',
      dbPrefix: env.DB_PREFIX ?? 'licensing',
      subjectPrefix: env.EVENTS_SUBJECT_PREFIX ?? 'licensing.events',
      stream: env.EVENTS_STREAM ?? 'LICENSING_EVENTS',
      internalToken: secrets.internal_token,
      apiKeyPepper: secrets.api_key_pepper,
      signingKeySecret: secrets.signing_key_secret,
      webhookSecretKey: secrets.webhook_secret_key,
      host: s.host,
      // Sign-up links are written to .data/mail unless a mail server is given (README: "Sign-up mail").
      mailUrl: env.MAIL_URL ?? (s.nodeEnv === 'production' ? undefined : `dir://${join(dataDir, 'mail')}`),
      nodeEnv: s.nodeEnv,
      logLevel: env.LOG_LEVEL ?? 'info',
      // A developer's own receiver (README: "A webhook on your machine"); production refuses loopback whatever is set.
      webhookAllowLoopback: s.allowLoopbackWebhooks,
    },
    ports,
    s.logDir,
  ).catch(async (err: Error) => {
    await ferret?.stop();
    fail(err.message);
  });
}

/** Where the operator CLI finds the running account service (and the gateway, for import and export). */
function writeRunFiles({ mongoUrl }: Settings, ferret: FerretDB | undefined, system: System) {
  mkdirSync(join(dataDir, 'run'), { recursive: true });
  // What its jobs (migrate, reseal, …) need besides the secrets of secrets.json: the store (mode 600, URLs may hold passwords).
  writeFileSync(
    join(dataDir, 'run', 'jobs.json'),
    JSON.stringify(
      {
        MONGO_URL: mongoUrl,
        FERRETDB_POSTGRESQL_URL: ferret?.postgres?.url ?? '',
        DB_PREFIX: env.DB_PREFIX ?? 'licensing',
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
  writeFileSync(
    join(dataDir, 'run', 'stack.json'),
    JSON.stringify(
      { account_grpc_addr: system.addrs.account, gateway_url: system.gatewayUrl, pid: process.pid },
      null,
      2,
    ),
  );
}

/** What runs where, and what to do first. */
function printWelcome(s: Settings, system: System, metricsPorts: Record<string, number>) {
  console.log(`Gateway listening at ${system.gatewayUrl} (API reference: ${system.gatewayUrl}/docs)`);
  console.log(
    `Metrics: http://${s.host}:${metricsPorts[gateway.name]}/metrics (gateway), ${components
      .filter((c) => c.name !== gateway.name)
      .map((c) => `${metricsPorts[c.name]} (${c.name})`)
      .join(', ')}`,
  );
  if (!env.MAIL_URL && s.nodeEnv !== 'production')
    console.log(
      `Dashboard sign-up: ${system.gatewayUrl}/dashboard/signup; its e-mails (with the confirmation link) and buyers' purchase e-mails are files in ${join(dataDir, 'mail')}`,
    );
  if (s.allowLoopbackWebhooks)
    console.log(
      `Webhooks: endpoints on this machine (http://127.0.0.1:…) are allowed (${s.nodeEnv}; WEBHOOK_ALLOW_LOOPBACK=false refuses them, production always does). A receiver: node examples/webhook-receiver/receiver.mjs`,
    );
  console.log(
    `Logs: ${s.logDir}. First API key: npm run admin -- create-account --name "Acme"   (Ctrl-C stops everything)`,
  );
}

/** Ctrl-C (or SIGTERM) stops everything cleanly; so does a component that exits on its own, with code 1. */
function stopOnSignalOrCrash(system: System, ferret: FerretDB | undefined, logDir: string) {
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

async function main() {
  const s = settings();
  await checkNatsAndRedis(s);
  const ferret = await startStoreUnlessRunning(s);
  const secrets = systemSecrets(s);
  const { ports, metricsPorts } = await freePorts(s);
  const system = await launch(s, ferret, secrets, ports);
  writeRunFiles(s, ferret, system);
  printWelcome(s, system, metricsPorts);
  stopOnSignalOrCrash(system, ferret, s.logDir);
}

main().catch((err: Error) => fail(err.stack ?? err.message));
