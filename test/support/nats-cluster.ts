import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect, type ConnectionOptions } from 'nats';
import { inboxPrefixOf, natsLogins, type NatsLogin } from '@licensing/runtime';
import { freePort } from '../../scripts/lib/net';
import { eventually } from './eventually';
import { PrivateServer, serverBinary } from './private-server';

const root = join(__dirname, '..', '..');
/** What the deployments start NATS with (compose and deploy/k8s/components/nats run the same two files). */
export const SHIPPED_START = join(root, 'deploy/nats/start.sh');
export const SHIPPED_CONFIG = join(root, 'deploy/nats/nats.conf');

/**
 * The test's own login, which no deployment has: it reads the stream's and the fan-out consumer's
 * state and moves the consumer's leader (no component may step a leader down). Everything else in
 * the configuration is the shipped file, word for word.
 */
export const OBSERVER = 'observer';

/**
 * deploy/nats/nats.conf as shipped, with the observer's login added at the end of its users (the
 * only change): the components' users, passwords (start.sh's variables) and permissions are the
 * deployments' own.
 */
export function shippedConfigWithObserver(observerPassword: string): string {
  const shipped = readFileSync(SHIPPED_CONFIG, 'utf8');
  const end = '\n  ]\n}\n';
  if (!shipped.endsWith(end)) throw new Error(`${SHIPPED_CONFIG} no longer ends its users list as expected`);
  const observer = `    { user: "${OBSERVER}", password: ${JSON.stringify(observerPassword)}, permissions: { publish: { allow: ["$JS.API.INFO", "$JS.API.STREAM.INFO.>", "$JS.API.CONSUMER.INFO.>", "$JS.API.CONSUMER.LEADER.STEPDOWN.>"] }, subscribe: { allow: ["${inboxPrefixOf(OBSERVER)}.>"] } } }`;
  return `${shipped.slice(0, -end.length)},\n${observer}${end}`;
}

/**
 * One node of a NatsCluster: deploy/nats/start.sh starting nats-server with the shipped configuration
 * and the cluster settings a StatefulSet pod gets (NATS_CLUSTER_*), whose ports and store survive kill
 * and restart. start.sh ends in `exec nats-server`, so the process killed is the server itself.
 */
export class ClusterNode extends PrivateServer {
  constructor(
    readonly name: string,
    port: number,
    /** Its monitoring port (/jsz, /healthz). */
    readonly monitorPort: number,
    env: Record<string, string>,
    args: string[],
  ) {
    super(port, '/usr/bin/env', [...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'sh', SHIPPED_START, ...args]);
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** SIGKILL: no goodbye to the other nodes or the clients, its store left as it was. */
  kill(): Promise<void> {
    return this.pause();
  }

  /** Starts it again on its ports over the store it had. */
  restart(): Promise<void> {
    return this.resume();
  }

  /**
   * The last sequence of `stream` in this node's own store (its monitoring endpoint, not the stream's
   * leader, answers): 0 while it holds none of it.
   */
  async lastSeqOf(stream: string): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${this.monitorPort}/jsz?streams=true`, {
      signal: AbortSignal.timeout(1000),
    });
    const jsz = (await res.json()) as {
      account_details?: { stream_detail?: { name: string; state?: { last_seq?: number } }[] }[];
    };
    const streams = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
    return streams.find((x) => x.name === stream)?.state?.last_seq ?? 0;
  }
}

/**
 * Three (or `size`) nats-server processes with JetStream as one cluster on loopback, each started as
 * the deployments start theirs: deploy/nats/start.sh over the shipped deploy/nats/nats.conf (a user per
 * component and the set-up step's, passwords from secret files as make-secrets.sh writes them, the
 * alternate logins closed), and the cluster settings of deploy/k8s/components/nats (NATS_CLUSTER_NAME,
 * NATS_CLUSTER_ROUTES listing every node, itself included, NATS_CLUSTER_LISTEN, NATS_SERVER_NAME).
 * Each node has its own store folder, client, route and monitoring port (from the test's port slice).
 */
export class NatsCluster {
  private constructor(
    readonly nodes: ClusterNode[],
    private readonly root: string,
    /** Each login's password, as its secret file nats_password_<login> holds it. */
    readonly passwords: Record<NatsLogin, string>,
    private readonly observerPassword: string,
  ) {}

  static async start(size = 3): Promise<NatsCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'licensing-test-nats-cluster-'));
    // The secret files start.sh reads: every login's password, every alternate empty (closed).
    const secrets = join(dir, 'secrets');
    mkdirSync(secrets, { mode: 0o700 });
    const passwords = Object.fromEntries(natsLogins.map((u) => [u, randomBytes(18).toString('hex')])) as Record<
      NatsLogin,
      string
    >;
    for (const login of natsLogins) {
      writeFileSync(join(secrets, `nats_password_${login}`), `${passwords[login]}\n`, { mode: 0o600 });
      writeFileSync(join(secrets, `nats_password_${login}_alt`), '', { mode: 0o600 });
    }
    const observerPassword = randomBytes(18).toString('hex');
    const config = join(dir, 'nats.conf');
    writeFileSync(config, shippedConfigWithObserver(observerPassword), { mode: 0o600 });

    const ports: { client: number; route: number; monitor: number }[] = [];
    for (let i = 0; i < size; i++)
      ports.push({ client: await freePort(), route: await freePort(), monitor: await freePort() });
    const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(',');
    const path = `${dirname(serverBinary('nats-server', 'apt-get install nats-server'))}:${process.env.PATH}`;
    const nodes = ports.map(({ client, route, monitor }, i) => {
      const name = `n${i + 1}`;
      const env = {
        PATH: path,
        NATS_SECRETS_DIR: secrets,
        NATS_CONFIG: config,
        NATS_CLUSTER_NAME: 'licensing-test',
        NATS_CLUSTER_ROUTES: routes,
        NATS_CLUSTER_LISTEN: `127.0.0.1:${route}`,
        NATS_SERVER_NAME: name,
      };
      // The arguments the StatefulSet gives start.sh (-js -sd <store> -m <port>), on loopback ports.
      const args = ['-a', '127.0.0.1', '-p', String(client), '-m', String(monitor), '-js', '-sd', join(dir, name)];
      return new ClusterNode(name, client, monitor, env, args);
    });
    const cluster = new NatsCluster(nodes, dir, passwords, observerPassword);
    try {
      await Promise.all(nodes.map((n) => n.resume()));
      await cluster.jetStreamReady();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Every node's client URL, comma-separated: NATS_URL for a cluster. */
  get url(): string {
    return this.nodes.map((n) => n.url).join(',');
  }

  /** How the test's observer connects (stream and consumer state, leader step-downs). */
  get observer(): ConnectionOptions {
    return {
      servers: this.nodes.map((n) => n.url),
      user: OBSERVER,
      pass: this.observerPassword,
      inboxPrefix: inboxPrefixOf(OBSERVER),
    };
  }

  /** How a component or the set-up step connects: its own login and inbox prefix. */
  loginOf(user: NatsLogin): ConnectionOptions {
    return {
      servers: this.nodes.map((n) => n.url),
      user,
      pass: this.passwords[user],
      inboxPrefix: inboxPrefixOf(user),
    };
  }

  node(name: string): ClusterNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name} in this cluster (${this.nodes.map((x) => x.name).join(', ')})`);
    return n;
  }

  /**
   * Until the JetStream meta leader is elected (account info is answered by it) and every node is in
   * the meta group: before that, creating a stream with 3 replicas fails for want of peers.
   */
  async jetStreamReady(timeoutMs = 20_000): Promise<void> {
    const nc = await connect(this.observer);
    try {
      await eventually(
        async () => {
          const jsm = await nc.jetstreamManager({ timeout: 1000 });
          await jsm.getAccountInfo();
          for (const n of this.nodes) {
            const meta = await metaGroup(n.monitorPort);
            if (!meta.leader || meta.size !== this.nodes.length)
              throw new Error(`${n.name} sees no complete meta group yet: ${JSON.stringify(meta)}`);
          }
        },
        { timeoutMs, intervalMs: 200 },
      );
    } finally {
      await nc.close();
    }
  }

  async stop(): Promise<void> {
    for (const n of this.nodes) await n.pause();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The JetStream meta group as one node's monitoring endpoint (/jsz) reports it. */
export async function metaGroup(monitorPort: number): Promise<{ leader?: string; size: number }> {
  const res = await fetch(`http://127.0.0.1:${monitorPort}/jsz`, { signal: AbortSignal.timeout(1000) });
  const jsz = (await res.json()) as { meta_cluster?: { leader?: string; cluster_size?: number } };
  return { leader: jsz.meta_cluster?.leader || undefined, size: jsz.meta_cluster?.cluster_size ?? 0 };
}
