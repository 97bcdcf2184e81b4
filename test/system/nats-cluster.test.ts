import { randomUUID } from 'node:crypto';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { commonSchema, NATS_SETUP_USER, runEventsSetup, WEBHOOK_FANOUT_CONSUMER } from '@licensing/runtime';
import { client, startStack, type ApiResponse, type Stack } from '../support/stack';
import { NatsCluster } from '../support/nats-cluster';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';
import { expectCacheFollows } from '../support/metrics';

// The system on a real JetStream cluster of three nodes, the event stream at 3 replicas (as
// docs/operations.md, "NATS cluster", tells operators to run it): the node that leads the stream dies
// (SIGKILL) while licences are being issued, and comes back. Every licence's webhook still arrives,
// once, and the API answers nothing but documented codes meanwhile.
// The nodes run what the deployments ship (test/support/nats-cluster.ts): deploy/nats/start.sh over
// deploy/nats/nats.conf, a user per component with its own password from its secret file, and the
// cluster settings of deploy/k8s/components/nats. So the stack uses the shipped subjects and stream
// (the configuration's permissions name them), on a cluster of its own.
// Own stack: it runs over a JetStream cluster of three nodes of its own, one of which it kills.
jest.setTimeout(90_000);

/** The subjects and stream deploy/nats/nats.conf is generated for (the settings' defaults). */
const shipped = {
  subjectPrefix: commonSchema.EVENTS_SUBJECT_PREFIX.default!,
  stream: commonSchema.EVENTS_STREAM.default!,
};

describe('a node of the cluster dies', () => {
  let cluster: NatsCluster;
  let stack: Stack;
  let receiver: WebhookReceiver;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    cluster = await NatsCluster.start(3);
    // NATS_URL as a cluster's deployment gives it: every node, comma-separated.
    // The receiver answers from this busy process (the whole stack runs in it, on a small machine): with
    // the tests' usual 600 ms a late answer counts as a failed attempt and is sent again, by design (at
    // least once; receivers deduplicate on webhook-id). What this test counts is what NATS does.
    stack = await startStack({
      ...shipped,
      natsUrl: cluster.url,
      natsPasswords: cluster.passwords,
      eventsReplicas: 3,
      webhookTimeoutMs: 5000,
    });
    receiver = await WebhookReceiver.start();
    nc = await connect(cluster.observer);
    jsm = await nc.jetstreamManager({ timeout: 2000 });
  });

  afterAll(async () => {
    await nc?.close();
    await receiver?.stop();
    await stack?.stop();
    await cluster?.stop();
  });

  /** The stream's leader and its replicas, as the cluster reports them now (asking again while it elects). */
  const streamCluster = () =>
    eventually(
      async () => {
        const info = await jsm.streams.info(stack.topology.stream);
        if (!info.cluster) throw new Error('the stream reports no cluster');
        return { config: info.config, ...info.cluster, replicas: info.cluster.replicas ?? [] };
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );

  /**
   * Until the node named leads the webhook fan-out's consumer: each step-down hands its leadership to
   * another of the stream's nodes, chosen by the cluster.
   */
  const leadFanoutOn = (node: string) =>
    eventually(
      async () => {
        const info = await jsm.consumers.info(stack.topology.stream, WEBHOOK_FANOUT_CONSUMER);
        if (info.cluster?.leader === node) return;
        await nc.request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${stack.topology.stream}.${WEBHOOK_FANOUT_CONSUMER}`, '', {
          timeout: 2000,
        });
        throw new Error(`the fan-out consumer is led by ${info.cluster?.leader}, not ${node}`);
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );

  /** The delivery log entries of these events (GET /api/v1/webhooks/{id}/deliveries, every page). */
  async function deliveriesOf(api: ReturnType<typeof client>, endpointId: string, eventIds: string[]) {
    const found: unknown[] = [];
    let after = '';
    for (;;) {
      const page = await api('GET', `/api/v1/webhooks/${endpointId}/deliveries?limit=100${after}`);
      found.push(...(page.body.data as { event_id: string }[]).filter((d) => eventIds.includes(d.event_id)));
      if (!page.body.has_more) return found;
      after = `&starting_after=${page.body.next_cursor}`;
    }
  }

  /**
   * The answers the API may give, whatever NATS does (docs/api.md, "Errors"): a status and its code (a
   * problem's, or a validation's result). Anything else fails the test.
   */
  const DOCUMENTED = {
    issue: ['201', '503 service_unavailable'],
    validate: ['200 valid', '503 service_unavailable'],
  };

  it("runs the shipped configuration: no client without a login, no component publishing another's events", async () => {
    await expect(connect({ servers: cluster.nodes[0].url, reconnect: false })).rejects.toThrow(/authorization/i);
    const gateway = await connect(cluster.loginOf('gateway'));
    try {
      // Dropped by the server (the gateway owns no events): never acknowledged by the stream.
      await expect(
        gateway.jetstream({ timeout: 1000 }).publish(`${shipped.subjectPrefix}.license.created`, '{}'),
      ).rejects.toThrow();
    } finally {
      await gateway.close();
    }
  });

  it('a JetStream node killed and restarted while licences are issued: every webhook arrives once, every answer is documented', async () => {
    // The set-up step made the stream with a copy on every node.
    const before = await streamCluster();
    expect(before.config.num_replicas).toBe(3);
    expect([before.leader, ...before.replicas.map((r) => r.name)].sort()).toEqual(['n1', 'n2', 'n3']);

    const { apiKey, accountId } = await stack.newAccount();
    await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000 });
    const api = client(stack.url, apiKey);
    const productId = (await api('POST', '/api/v1/products', { name: 'Clustered' })).body.id as string;
    const endpoint = await api('POST', '/api/v1/webhooks', {
      url: `${receiver.url}/cluster`,
      events: ['license.created'],
    });
    expect(endpoint.status).toBe(201);
    const endpointId = endpoint.body.id as string;

    /** Every answer the API gave, by what was asked: `<status>[ <code>]`, or what the OpenAPI check said of it. */
    const answers: { asked: keyof typeof DOCUMENTED; answer: string }[] = [];
    const ask = async (asked: keyof typeof DOCUMENTED, request: () => Promise<ApiResponse>) => {
      try {
        const res = await request();
        const code = (res.body as { code?: string } | undefined)?.code;
        answers.push({ asked, answer: code ? `${res.status} ${code}` : String(res.status) });
        return res;
      } catch (err) {
        // An answer the OpenAPI document does not describe: recorded (it fails the test below), not retried.
        answers.push({ asked, answer: (err as Error).message });
        return undefined;
      }
    };
    const issued: string[] = [];
    /**
     * Issues one licence, as a careful client does: a 503 (documented, with Retry-After) is retried with
     * the same Idempotency-Key, so the licence is issued once however many tries it takes. Then its app
     * validates it, which the gateway answers from its cache when its followers trust their events.
     */
    const issueOne = async (n: number) => {
      const idempotencyKey = randomUUID();
      const res = await eventually(
        async () => {
          const r = await ask('issue', () =>
            api(
              'POST',
              '/api/v1/licenses',
              { product_id: productId, customer_email: `cluster-${n}@example.com` },
              { 'idempotency-key': idempotencyKey },
            ),
          );
          if (r?.status === 503) throw new Error('503: try again with the same Idempotency-Key');
          return r;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      if (res?.status !== 201) return;
      const key = res.body.license_key as string;
      issued.push(key);
      await ask('validate', () => api('GET', `/api/v1/licenses/validate?license_key=${key}`));
    };

    // A steady stream of issuances, not a burst: one begins every 100 ms whatever the others do, so
    // several are in flight whenever answers slow down, until the node is back and caught up. (The pace
    // shapes the load; no assertion waits on it.)
    const inFlight: Promise<void>[] = [];
    let started = 0;
    const pace = setInterval(() => inFlight.push(issueOne(started++)), 100);
    const issuedAtLeast = (n: number) =>
      eventually(() => expect(issued.length).toBeGreaterThanOrEqual(n), { timeoutMs: 20_000, intervalMs: 50 });

    try {
      await issuedAtLeast(15);
      // The node that leads the stream: every publish until now went through it, and its store holds them.
      const victim = cluster.node((await streamCluster()).leader!);
      // It leads the webhook fan-out's durable consumer too (moved there if the cluster placed it elsewhere):
      // its death takes both the publishing and the delivering side's leader at once.
      await leadFanoutOn(victim.name);
      const seqAtKill = await victim.lastSeqOf(stack.topology.stream);
      expect(seqAtKill).toBeGreaterThan(0);
      await victim.kill();
      const killedAt = issued.length;

      // The two nodes left elect another leader among themselves and go on taking events.
      await eventually(
        async () => {
          const c = await streamCluster();
          expect(c.leader).toBeDefined();
          expect(c.leader).not.toBe(victim.name);
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await issuedAtLeast(killedAt + 15);
      const seqWhileDown = await eventually(
        async () => {
          // Well past what the victim may have stored as it died (publishes in flight then).
          const seq = (await jsm.streams.info(stack.topology.stream)).state.last_seq;
          expect(seq).toBeGreaterThanOrEqual(seqAtKill + 10);
          return seq;
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );

      await victim.restart();
      const restartedAt = issued.length;
      // It catches up from the others: its own store gets the events taken while it was dead.
      await eventually(
        async () => expect(await victim.lastSeqOf(stack.topology.stream)).toBeGreaterThanOrEqual(seqWhileDown),
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await issuedAtLeast(restartedAt + 15);
    } finally {
      clearInterval(pace);
      await Promise.allSettled(inFlight);
    }
    // Nothing but documented answers: a licence or a valid validation, or a 503 service_unavailable (retried).
    expect(answers.filter((a) => !DOCUMENTED[a.asked].includes(a.answer))).toEqual([]);
    expect((await Promise.allSettled(inFlight)).filter((r) => r.status === 'rejected')).toEqual([]);
    expect(issued).toHaveLength(started);

    // Every licence's license.created webhook arrives…
    const keyOf = (body: string) => (JSON.parse(body) as { data: { license: { key: string } } }).data.license.key;
    await eventually(
      () => {
        const got = new Set(receiver.at('/cluster').map((r) => keyOf(r.body)));
        const missing = issued.filter((k) => !got.has(k));
        if (missing.length) throw new Error(`${missing.length} of ${issued.length} licences' webhooks not arrived yet`);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // …once: no event id sent twice, no licence announced by two events.
    const received = receiver.at('/cluster');
    const ids = received.map((r) => String(r.headers['webhook-id']));
    const twice = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
    // Shown with their delivery log entries (attempts, last error), which say why one was sent again.
    expect(twice.length ? await deliveriesOf(api, endpointId, twice) : []).toEqual([]);
    expect(received.map((r) => keyOf(r.body)).sort()).toEqual([...issued].sort());

    // The caches' followers (R1 in-memory consumers, one of which may have lived on the dead node) are
    // made again: validations are answered from memory, and a suspension still reaches them at once.
    const key = issued[issued.length - 1];
    await expectCacheFollows({
      metricsUrl: stack.metricsUrls.gateway,
      code: async () => (await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.code as string,
      suspend: async () => (await api('POST', `/api/v1/licenses/${key}/suspend`)).status,
      timeoutMs: 15_000,
    });
  });
});

describe('a deployment that grew from one NATS server to three', () => {
  // A cluster of its own, fresh: the shipped configuration lets the set-up user make only the shipped
  // stream, and nobody delete it, so the first cluster's cannot be made again at 1.
  let cluster: NatsCluster;
  let nc: NatsConnection;

  beforeAll(async () => {
    cluster = await NatsCluster.start(3);
  });

  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it('the set-up step raises an existing stream to EVENTS_REPLICAS in place, keeping its events', async () => {
    // As its set-up step runs: first at 1, then at 3, as the set-up user with its own password.
    const setUp = (replicas: number) =>
      runEventsSetup({
        LOG_LEVEL: 'silent',
        NATS_URL: cluster.url,
        NATS_USER: NATS_SETUP_USER,
        NATS_PASSWORD: cluster.passwords[NATS_SETUP_USER],
        NATS_TLS_CA_FILE: '',
        EVENTS_RETENTION_HOURS: 1,
        EVENTS_REPLICAS: replicas,
        EVENTS_SUBJECT_PREFIX: shipped.subjectPrefix,
        EVENTS_STREAM: shipped.stream,
      });
    expect(await setUp(1)).toBe('created');
    // An event, published as the licence service (the only user allowed to say license.*).
    nc = await connect(cluster.loginOf('license'));
    await nc.jetstream().publish(`${shipped.subjectPrefix}.license.created`, '{}');
    expect(await setUp(3)).toBe('replicas changed');
    expect(await setUp(3)).toBe('unchanged');
    const info = await (await nc.jetstreamManager()).streams.info(shipped.stream);
    expect(info.config.num_replicas).toBe(3);
    expect(info.state.messages).toBe(1);
    // Every node gets the stream's events, the one it had included (30 s on a loaded machine, as the
    // other catch-ups here).
    await eventually(
      async () => {
        for (const n of cluster.nodes) expect(await n.lastSeqOf(shipped.stream)).toBe(1);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  });
});
