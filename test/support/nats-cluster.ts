import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { freePort } from '../../scripts/lib/net';
import { eventually } from './eventually';
import { PrivateServer, serverBinary } from './private-server';

/** One node of a NatsCluster: a nats-server process whose ports and store survive kill and restart. */
export class ClusterNode extends PrivateServer {
  constructor(
    readonly name: string,
    port: number,
    /** Its monitoring port (/jsz, /healthz). */
    readonly monitorPort: number,
    args: string[],
  ) {
    super(port, serverBinary('nats-server', 'apt-get install nats-server'), args);
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
 * Three (or `size`) nats-server processes with JetStream as one cluster on loopback, each with its
 * own store folder, client port and route port (from the test's port slice: freePort), every node
 * soliciting routes to all the others, as a production cluster is set up.
 */
export class NatsCluster {
  private constructor(
    readonly nodes: ClusterNode[],
    private readonly root: string,
  ) {}

  static async start(size = 3): Promise<NatsCluster> {
    const root = mkdtempSync(join(tmpdir(), 'licensing-test-nats-cluster-'));
    const ports: { client: number; route: number; monitor: number }[] = [];
    for (let i = 0; i < size; i++)
      ports.push({ client: await freePort(), route: await freePort(), monitor: await freePort() });
    const routeUrl = (i: number) => `nats://127.0.0.1:${ports[i].route}`;
    const nodes = ports.map(({ client, monitor }, i) => {
      const name = `n${i + 1}`;
      const others = ports.map((_, j) => j).filter((j) => j !== i);
      return new ClusterNode(name, client, monitor, [
        '-a',
        '127.0.0.1',
        '-p',
        String(client),
        '-m',
        String(monitor),
        '--name',
        name,
        '-js',
        '-sd',
        join(root, name),
        '--cluster_name',
        'licensing-test',
        '--cluster',
        routeUrl(i),
        '--routes',
        others.map(routeUrl).join(','),
      ]);
    });
    const cluster = new NatsCluster(nodes, root);
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
    const nc = await connect({ servers: this.nodes.map((n) => n.url) });
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
