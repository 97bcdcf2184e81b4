import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { connect, type StreamConfig } from 'nats';
import { Redis } from 'ioredis';
import { parseCallers, tokenDigest } from '@licensing/runtime';
import { callersOf } from '../../scripts/lib/topology';
import { componentNames, databaseOf, services } from '../../scripts/lib/components';
import { natsComponents } from './support';
import { deployNatsConfig, deployNatsConfigMap, NATS_CONFIG_MAP_FILE } from '../../scripts/lib/deploy-nats';
import { PrivateServer, serverBinary } from '../support/private-server';
import { read, root, yamlDocsOf, yamlOf } from './support';

// The users of the stores and the gRPC credentials, as the deployments make
// them: deploy/make-secrets.sh writes the secrets, deploy/nats/start.sh and
// deploy/redis/start.sh start real servers with them, and the MongoDB init
// script runs against a recording stand-in (FerretDB, the test store, has no users).

const secrets = mkdtempSync(join(tmpdir(), 'licensing-store-users-'));
const secret = (name: string) => readFileSync(join(secrets, name), 'utf8').trim();
const compose = yamlOf('docker-compose.yml');
const servers: PrivateServer[] = [];

beforeAll(() => {
  execFileSync('sh', [join(root, 'deploy/make-secrets.sh')], {
    env: { ...process.env, SECRETS_DIR: secrets },
    stdio: 'ignore',
  });
});

afterAll(async () => {
  for (const s of servers) await s.pause();
  rmSync(secrets, { recursive: true, force: true });
});

describe('make-secrets.sh', () => {
  it('writes the secrets of every component in components.json', () => {
    const callers = [...new Set(services.flatMap((x) => x.callers))];
    const expected = [
      ...natsComponents.map((c) => `nats_password_${c}`),
      ...componentNames.flatMap((c) => [`${c}.crt`, `${c}.key`]),
      'nats_password_setup',
      ...services.flatMap((x) => [`mongo_url_${x.name}`, `mongo_password_${x.name}`, `internal_callers_${x.name}`]),
      ...callers.flatMap((c) => [`internal_token_${c}`, `${c}.crt`]),
    ];
    expect(expected.filter((name) => !existsSync(join(secrets, name)))).toEqual([]);
    // And compose hands the stores the passwords of every user.
    // ...and the second slot of each (empty: closed), which the rotation runbook fills.
    expect(compose.services.nats.secrets).toEqual([
      ...natsComponents.map((c) => `nats_password_${c}`),
      'nats_password_setup',
      ...natsComponents.map((c) => `nats_password_${c}_alt`),
      'nats_password_setup_alt',
    ]);
    expect(compose.services.mongodb.secrets).toEqual([
      'mongo_root_password',
      ...services.map((x) => `mongo_password_${x.name}`),
    ]);
  });
});

describe('gRPC credentials from make-secrets.sh', () => {
  it.each(Object.keys(callersOf) as (keyof typeof callersOf)[])(
    '%s accepts exactly its callers, by the digests of their own tokens',
    (svc) => {
      const accepted = parseCallers(secret(`internal_callers_${svc}`));
      expect([...accepted.keys()].sort()).toEqual([...callersOf[svc]].sort());
      for (const caller of callersOf[svc])
        expect(accepted.get(caller)!.map((d) => `sha256:${d.toString('hex')}`)).toEqual([
          tokenDigest(secret(`internal_token_${caller}`)),
        ]);
      expect(secret(`internal_callers_${svc}`)).not.toContain(secret('internal_token_gateway'));
    },
  );
});

describe('NATS', () => {
  it('deploy/nats/nats.conf is generated from the permission table (run `npm run docs` after changing it)', () => {
    expect(read('deploy/nats/nats.conf')).toBe(deployNatsConfig());
    // And carried, with start.sh, to the Kubernetes NATS cluster by a generated ConfigMap.
    expect(read(NATS_CONFIG_MAP_FILE)).toBe(
      deployNatsConfigMap({ 'nats.conf': read('deploy/nats/nats.conf'), 'start.sh': read('deploy/nats/start.sh') }),
    );
    const nats = compose.services.nats;
    expect(nats.volumes).toContain('./deploy/nats:/etc/nats:ro');
    expect(nats.entrypoint).toEqual(['sh', '/etc/nats/start.sh']);
    for (const c of natsComponents) {
      expect(nats.secrets).toContain(`nats_password_${c}`);
      expect(compose.services[c].environment).toMatchObject({
        NATS_USER: c,
        NATS_PASSWORD_FILE: `/run/secrets/nats_password_${c}`,
      });
    }
  });

  it('every setting deploy/nats/start.sh reads is in docs/operations.md', () => {
    const settings = [...new Set([...read('deploy/nats/start.sh').matchAll(/\$\{(NATS_[A-Z_]+)/g)].map((m) => m[1]))];
    expect(settings).toEqual(
      expect.arrayContaining(['NATS_CLUSTER_NAME', 'NATS_CLUSTER_ROUTES', 'NATS_CLUSTER_LISTEN', 'NATS_SERVER_NAME']),
    );
    const doc = read('docs/operations.md');
    expect(settings.filter((name) => !doc.includes(`\`${name}\``))).toEqual([]);
  });

  it('deploy/nats/start.sh refuses a cluster name without the routes to its nodes, before starting anything', () => {
    let failure: { status: number; stderr: string } | undefined;
    try {
      execFileSync('sh', [join(root, 'deploy/nats/start.sh')], {
        env: { ...process.env, NATS_SECRETS_DIR: secrets, NATS_CLUSTER_NAME: 'licensing', NATS_CLUSTER_ROUTES: '' },
        stdio: 'pipe',
        encoding: 'utf8',
      });
    } catch (err) {
      failure = err as { status: number; stderr: string };
    }
    expect(failure?.status).toBe(1);
    expect(failure?.stderr).toMatch(/NATS_CLUSTER_NAME is set but NATS_CLUSTER_ROUTES is empty/);
  });

  it('started by deploy/nats/start.sh: each component logs in with its own password and publishes only its own events', async () => {
    const store = mkdtempSync(join(secrets, 'js-'));
    writeFileSync(join(secrets, 'nats_password_account_alt'), `${randomBytes(18).toString('hex')}\n`, { mode: 0o600 });
    // As in the container, with the secrets and configuration where this test has them (and nats-server on PATH).
    const env = [
      `NATS_SECRETS_DIR=${secrets}`,
      `NATS_CONFIG=${join(root, 'deploy/nats/nats.conf')}`,
      `PATH=${dirname(serverBinary('nats-server', 'apt-get install nats-server'))}:${process.env.PATH}`,
    ];
    const server = await PrivateServer.launch('/usr/bin/env', (port) => [
      ...env,
      'sh',
      join(root, 'deploy/nats/start.sh'),
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-sd',
      store,
    ]);
    servers.push(server);
    const url = `nats://127.0.0.1:${server.port}`;
    await expect(connect({ servers: url, user: 'account', pass: 'wrong', reconnect: false })).rejects.toThrow(
      /authorization/i,
    );
    // A password rotation under way (docs/operations.md, "Rotating secrets"): the account service's
    // new password is its alternate login's, and both logins are valid at once, with the same rights.
    const alt = await connect({
      servers: url,
      user: 'account_alt',
      pass: secret('nats_password_account_alt'),
      inboxPrefix: '_INBOX_account',
    });
    const altErrors: string[] = [];
    void (async () => {
      for await (const s of alt.status()) if (s.type === 'error') altErrors.push(String(s.data));
    })();
    alt.publish('licensing.events.account.updated', '{}');
    await alt.flush();
    expect(altErrors).toEqual([]);
    alt.publish('licensing.events.license.created', '{}');
    await alt.flush();
    await alt.flush();
    expect(altErrors).toContain('PERMISSIONS_VIOLATION');
    await alt.close();
    // An alternate with no password file is closed: nobody knows its password.
    for (const pass of ['', secret('nats_password_gateway'), 'wrong'])
      await expect(connect({ servers: url, user: 'gateway_alt', pass, reconnect: false })).rejects.toThrow(
        /authorization/i,
      );
    const nc = await connect({
      servers: url,
      user: 'account',
      pass: secret('nats_password_account'),
      inboxPrefix: '_INBOX_account',
    });
    const errors: string[] = [];
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error') errors.push(String(s.data));
    })();
    nc.publish('licensing.events.account.updated', '{}');
    await nc.flush();
    expect(errors).toEqual([]);
    nc.publish('licensing.events.checkout.completed', '{}');
    await nc.flush();
    await nc.flush();
    expect(errors).toContain('PERMISSIONS_VIOLATION');
    await nc.close();
    // The set-up step, as compose and the Kubernetes Job run it: the stream, made by the setup user.
    const setupEnv = {
      PATH: process.env.PATH,
      LOG_LEVEL: 'silent',
      NATS_URL: url,
      NATS_USER: 'setup',
      NATS_PASSWORD_FILE: join(secrets, 'nats_password_setup'),
    };
    execFileSync(process.execPath, [join(root, 'packages/runtime/dist/events/events-setup.js')], { env: setupEnv });
    const gateway = await connect({
      servers: url,
      user: 'gateway',
      pass: secret('nats_password_gateway'),
      inboxPrefix: '_INBOX_gateway',
    });
    const jsm = await gateway.jetstreamManager({ timeout: 2000 });
    const info = await jsm.streams.info('LICENSING_EVENTS');
    expect(info.config).toMatchObject({ subjects: ['licensing.events.>'], max_age: 168 * 3600 * 1e9 });
    // ...which the internet-facing gateway can look at, but not change, purge or delete.
    const seal: StreamConfig = { ...info.config, sealed: true };
    await expect(jsm.streams.update('LICENSING_EVENTS', seal)).rejects.toThrow(/permissions violation/i);
    await expect(jsm.streams.purge('LICENSING_EVENTS')).rejects.toThrow(/permissions violation/i);
    await expect(jsm.streams.delete('LICENSING_EVENTS')).rejects.toThrow(/permissions violation/i);
    await gateway.close();
  });
});

describe('Redis', () => {
  it("started by deploy/redis/start.sh: no default user; the gateway's user reaches only the rate-limit keys", async () => {
    const env = [
      `REDIS_SECRETS_DIR=${secrets}`,
      `PATH=${dirname(serverBinary('redis-server', 'apt-get install redis-server'))}:${process.env.PATH}`,
    ];
    const server = await PrivateServer.launch('/usr/bin/env', (port) => [
      ...env,
      'sh',
      join(root, 'deploy/redis/start.sh'),
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
    ]);
    servers.push(server);
    const url = new URL(secret('redis_url_gateway'));
    expect([url.username, url.hostname]).toEqual(['gateway', 'redis']);
    const gateway = new Redis({
      host: '127.0.0.1',
      port: server.port,
      username: url.username,
      password: decodeURIComponent(url.password),
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      await gateway.connect();
      expect(await gateway.incr('licensing:rl:key_1:minute')).toBe(1);
      expect(await gateway.eval("return redis.call('INCRBY', KEYS[1], 2)", 1, 'licensing:rl:acct_1:hour')).toBe(2);
      await expect(gateway.set('licensing:sessions:x', '1')).rejects.toThrow(/NOPERM/);
      await expect(gateway.keys('*')).rejects.toThrow(/NOPERM/);
      await expect(gateway.flushall()).rejects.toThrow(/NOPERM/);
      await expect(gateway.config('GET', 'requirepass')).rejects.toThrow(/NOPERM/);
      // Without a user: the default user is off.
      const anonymous = execFileSync(
        serverBinary('redis-cli', 'apt-get install redis-tools'),
        ['-p', String(server.port), 'GET', 'licensing:rl:key_1:minute'],
        { encoding: 'utf8' },
      );
      expect(anonymous).toMatch(/NOAUTH/);
    } finally {
      gateway.disconnect();
    }
  });
});

describe('MongoDB', () => {
  const script = read('deploy/mongo/create-users.js');

  it('the init script gives each service a user with readWrite on its own database only, and is safe to run again', () => {
    const users = new Map<string, { db: string; user: string; pwd: string; roles: unknown }>();
    const dbOf = (name: string) => ({
      getUser: (user: string) => users.get(`${name}/${user}`) ?? null,
      createUser: (u: { user: string; pwd: string; roles: unknown }) =>
        users.set(`${name}/${u.user}`, { db: name, ...u }),
      updateUser: (user: string, u: { pwd: string; roles: unknown }) =>
        users.set(`${name}/${user}`, { db: name, user, ...u }),
    });
    const run = () =>
      runInNewContext(script, {
        db: { getSiblingDB: dbOf },
        require: (m: string) => (m === 'fs' ? { readFileSync } : undefined),
        process: { env: { MONGO_SECRETS_DIR: secrets } },
        print: () => undefined,
      });
    run();
    run();
    expect([...users.keys()].sort()).toEqual(services.map((x) => `${databaseOf(x.name)}/${x.name}`).sort());
    for (const u of users.values()) {
      expect(u.roles).toEqual([{ role: 'readWrite', db: u.db }]);
      expect(u.pwd).toBe(secret(`mongo_password_${u.user}`));
      // The service's connection URL names the same user, password and database.
      const url = new URL(secret(`mongo_url_${u.user}`));
      expect([url.username, url.password, url.pathname, url.searchParams.get('authSource')]).toEqual([
        u.user,
        u.pwd,
        `/${u.db}`,
        u.db,
      ]);
    }
  });

  it('compose runs it on the first start, Kubernetes in the mongo-users Job with the same script', () => {
    const mongo = compose.services.mongodb;
    expect(mongo.volumes).toContain('./deploy/mongo/create-users.js:/docker-entrypoint-initdb.d/10-create-users.js:ro');
    expect(mongo.environment).toMatchObject({
      MONGO_INITDB_ROOT_USERNAME: 'root',
      MONGO_INITDB_ROOT_PASSWORD_FILE: '/run/secrets/mongo_root_password',
    });
    const [configMap, job] = yamlDocsOf('deploy/k8s/base/mongo-users.yaml');
    expect(configMap.data['create-users.js']).toBe(script);
    expect(job.kind).toBe('Job');
    expect(job.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'scripts').configMap.name).toBe(
      configMap.metadata.name,
    );
  });
});
