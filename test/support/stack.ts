import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { AccountServiceClient } from '@licensing/proto';
import { createClient, natsServers, type Clock, type RunningService, type StartOptions } from '@licensing/runtime';
import { once } from 'node:events';
import { freePort, waitForPort } from '../../scripts/lib/net';
import { spawnComponent } from '../../scripts/lib/launch';
import { setUpEvents } from '../../scripts/lib/events-setup';
import { start as startGateway } from '../../gateway/src/main';
import { start as startWeb } from '../../web/src/main';
import { componentOf, gateway, services, web, type Component, type ComponentEntry } from '../../scripts/lib/components';
import { credentialOf, envFor, pageKey, type Addrs, type Placement, type Topology } from '../../scripts/lib/topology';
import { stopWithin } from '@licensing/test-support';
import { HoldingProxy } from './holding-proxy';
import { checkAcceptedRequest, checkResponse } from './openapi';

// A whole system in this test process: every service of components.json and the
// gateway on free ports, over the run's FerretDB and the machine's NATS, with
// database names, subjects and stream unique to this stack so tests never see each other.

export interface Stack {
  url: string;
  topology: Topology;
  admin: ReturnType<typeof createClient<AccountServiceClient>>['call'];
  /** Each service's gRPC address by name, `checkoutPage` (its Stripe webhook receiver) and `webPage` (the pages). */
  addrs: Addrs;
  /** Where each component serves Prometheus /metrics, by name. */
  metricsUrls: Record<Component, string>;
  newAccount(plan?: string): Promise<{ accountId: string; apiKey: string }>;
  stopGateway(): Promise<void>;
  /** Another gateway over the same services (stopped with the stack), e.g. with other settings. */
  extraGateway(config?: Record<string, string>): Promise<{ url: string; metricsUrl: string; stop(): Promise<void> }>;
  /** Another gateway as its own OS process (real time, not the test clock; stopped with the stack). */
  gatewayProcess(
    config?: Record<string, string>,
  ): Promise<{ url: string; pid: number; exited: Promise<never>; stop(): Promise<number | null> }>;
  /** Stops one service (its database is kept) to see how the rest copes. */
  stopService(name: Component): Promise<void>;
  /** Starts a service again on its address after stopService (stopped with the stack). */
  restartService(name: Component): Promise<void>;
  /** Another instance of a service over the same stores and NATS: its gRPC address and metrics URL. */
  extraService(name: Component): Promise<{ addr: string; metricsUrl: string }>;
  /** The proxies in front of the services StackOptions.holdable named: hold() delays every answer of the service. */
  held: Partial<Record<Component, HoldingProxy>>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Services every caller reaches through a HoldingProxy (e.g. to make the product look-up outlast a deadline). */
  holdable?: Component[];
}

type StartService = (opts: StartOptions<any>) => Promise<RunningService<any>>;

/** A service's `start`, from its src/main.ts (every service's main exports one). */
export function startOf(c: ComponentEntry): StartService {
  const main = require(join(__dirname, '..', '..', c.folder, 'src', 'main')) as { start?: StartService };
  if (typeof main.start !== 'function') throw new Error(`${c.folder}/src/main.ts does not export start`);
  return main.start;
}

export function testTopology(overrides: Partial<Topology> = {}): Topology {
  const id = `${process.env.TEST_RUN_ID ?? 'local'}_${randomBytes(3).toString('hex')}`;
  return {
    mongoUrl: process.env.TEST_MONGO_URL!,
    ferretdbPostgresUrl: process.env.TEST_FERRETDB_POSTGRESQL_URL,
    queryShapesDir: process.env.QUERY_SHAPES_DIR,
    natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    rateLimitPrefix: `t_${id}:rl`,
    dbPrefix: `t_${id}`,
    subjectPrefix: `t_${id}.events`,
    stream: `T_${id}`,
    internalToken: randomBytes(24).toString('hex'),
    apiKeyPepper: randomBytes(24).toString('hex'),
    signingKeySecret: randomBytes(32).toString('base64'),
    webhookSecretKey: randomBytes(32).toString('base64'),
    webhookAllowLoopback: true,
    webhookRetryScheduleS: '0.3,0.3,0.3',
    webhookTimeoutMs: 600,
    webhookDispatchIntervalMs: 250,
    host: '127.0.0.1',
    mailUrl: `dir://${join(tmpdir(), `licensing-mail-${id}`)}`,
    dataDir: join(tmpdir(), `licensing-data-${id}`),
    metricsAnyPort: true,
    nodeEnv: 'test',
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    // The safety-net scans and flushes every second (production: several seconds): a change publishes
    // its events at once either way, and a whole suite of idle systems polling the store five times a
    // second spent a third of the machine's CPU on it. A file whose test clock or fault waits on these
    // passes shorter ones.
    outboxIntervalMs: 1000,
    statsFlushIntervalMs: 1000,
    expirySweepIntervalMs: 1000,
    ...overrides,
  };
}

/**
 * Topology overrides for a stack whose checkout takes payments through Stripe,
 * with the SDK pointed at the run's stripe-mock (test/support/global-setup.ts).
 * The webhook secret is the test's own, so it can sign the events stripe-mock never sends.
 */
export function stripeOverrides(
  webhookSecret = `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`,
): Partial<Topology> {
  const apiUrl = process.env.TEST_STRIPE_MOCK_URL;
  if (!apiUrl) throw new Error('TEST_STRIPE_MOCK_URL is not set: the jest globalSetup starts stripe-mock');
  return {
    paymentProvider: 'stripe',
    stripeSecretKey: 'sk_test_licensing',
    stripeWebhookSecret: webhookSecret,
    stripeApiUrl: apiUrl,
  };
}

/** A clock a test moves by hand; every service of a stack reads time from it. */
export class TestClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export async function startStack(
  overrides: Partial<Topology> = {},
  gatewayConfig: Record<string, string> = {},
  clock?: Clock,
  options: StackOptions = {},
): Promise<Stack> {
  const t = testTopology(overrides);
  // The gateway's port is chosen first so what services link to (sign-up mail, checkout pages) can name it.
  const gatewayPort = await freePort();
  const publicBaseUrl = `http://127.0.0.1:${gatewayPort}`;
  const addrs: Addrs = {};
  const placements = new Map<Component, Placement>();
  /** The instance of each service that runs now (a restarted one replaces the first). */
  const current = new Map<Component, RunningService<any>>();
  const extras: { stop(): Promise<void> }[] = [];
  const held: Partial<Record<Component, HoldingProxy>> = {};
  const serviceNamed = (name: Component) => {
    const c = componentOf(name);
    if (c.kind !== 'service') throw new Error(`${name} is not a service`);
    return c;
  };
  const startService = (c: ComponentEntry, placement: Placement) =>
    startOf(c)({ env: envFor(c.name, t, placement), clock });

  // The set-up step, as deployments run it: the event stream, which no component may make.
  await setUpEvents(t);
  // Ports chosen here (not 0) so a stopped service can start again on the same address; all of them
  // first, so a call against the start order (the product service's to the licence service) has its address.
  const ports = new Map<Component, number>();
  for (const c of services) ports.set(c.name, await freePort());
  for (const c of services) addrs[c.name] = `127.0.0.1:${ports.get(c.name)}`;
  // components.json's order: what a service calls is serving before it starts.
  for (const c of services) {
    const placement: Placement = {
      port: ports.get(c.name)!,
      httpPort: c.ports.http !== undefined ? await freePort() : undefined,
      addrs,
      publicBaseUrl,
    };
    placements.set(c.name, placement);
    current.set(c.name, await startService(c, placement));
    addrs[c.name] = `127.0.0.1:${placement.port}`;
    if (options.holdable?.includes(c.name)) {
      // Everything started after it (its callers come later in components.json) reaches it through the proxy.
      const proxy = await HoldingProxy.start({ host: '127.0.0.1', port: placement.port });
      held[c.name] = proxy;
      addrs[c.name] = proxy.address;
    }
    if (placement.httpPort !== undefined) addrs[pageKey(c.name)] = `http://127.0.0.1:${placement.httpPort}`;
  }
  // The web component (the dashboard, the customer portal and the hosted checkout page), which the gateway
  // passes those paths to.
  // It takes the gateway's settings too (each component reads only its own): a test's page throttles reach it.
  const webEnv = (config: Record<string, string>) => ({
    ...envFor(web!.name, t, { port: 0, addrs, publicBaseUrl }),
    ...gatewayConfig,
    ...config,
  });
  const pages = await startWeb({ env: webEnv({}) });
  addrs[pageKey(web!.name)] = pages.url;
  const gatewayEnv = (port: number, to = addrs) => envFor(gateway.name, t, { port, addrs: to });
  const gw = await startGateway({ env: { ...gatewayEnv(gatewayPort), ...gatewayConfig }, clock });
  const admin = createClient(AccountServiceClient, addrs.account, credentialOf(t, 'operator'));

  const metricsUrl = (port: number) => `http://127.0.0.1:${port}/metrics`;
  return {
    url: gw.url,
    topology: t,
    metricsUrls: {
      ...Object.fromEntries([...current].map(([name, s]) => [name, metricsUrl(s.metricsPort)])),
      [web!.name]: metricsUrl(pages.metricsPort),
      [gateway.name]: metricsUrl(gw.metricsPort),
    },
    admin: admin.call,
    addrs,
    held,
    // Enterprise by default so tests about other things never meet a rate limit.
    async newAccount(plan = 'enterprise') {
      const out = await admin.call.createAccount({ name: `Vendor ${randomBytes(2).toString('hex')}`, plan });
      return { accountId: out.account!.id, apiKey: out.secret };
    },
    stopGateway: () => gw.stop(),
    async extraGateway(config = {}) {
      // With a web component of its own, given the same settings (a test's page throttles and counters).
      const ownPages = await startWeb({ env: webEnv(config) });
      extras.push(ownPages);
      const to = { ...addrs, [pageKey(web!.name)]: ownPages.url };
      const g = await startGateway({ env: { ...gatewayEnv(0, to), ...gatewayConfig, ...config }, clock });
      extras.push(g);
      return { url: g.url, metricsUrl: metricsUrl(g.metricsPort), stop: g.stop };
    },
    async gatewayProcess(config = {}) {
      const port = await freePort();
      const logFile = join(tmpdir(), `licensing-gateway-${port}.log`);
      const { child, exited } = spawnComponent(
        'gateway',
        { ...gatewayEnv(port), ...gatewayConfig, ...config },
        logFile,
      );
      /** SIGTERM, then its exit code. */
      const stop = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
        const gone = once(child, 'exit') as Promise<[number | null]>;
        child.kill('SIGTERM');
        return (await gone)[0];
      };
      extras.push({ stop: async () => void (await stop()) });
      await Promise.race([waitForPort('127.0.0.1', port, 30_000), exited]);
      return { url: `http://127.0.0.1:${port}`, pid: child.pid!, exited, stop };
    },
    stopService: (name) => current.get(serviceNamed(name).name)!.stop(),
    async restartService(name) {
      const c = serviceNamed(name);
      current.set(name, await startService(c, placements.get(name)!));
    },
    async extraService(name) {
      const c = serviceNamed(name);
      const placement = placements.get(name)!;
      const httpPort = placement.httpPort === undefined ? undefined : 0;
      const extra = await startService(c, { ...placement, port: 0, httpPort });
      extras.push(extra);
      return { addr: `127.0.0.1:${extra.port}`, metricsUrl: metricsUrl(extra.metricsPort) };
    },
    async stop() {
      admin.close();
      for (const g of [...extras].reverse()) await stopWithin('an extra component', g.stop());
      await stopWithin('the gateway', gw.stop());
      await stopWithin('the web component', pages.stop());
      for (const proxy of Object.values(held)) {
        proxy?.release();
        await proxy?.stop();
      }
      // All at once: nothing calls them any more (the gateway is stopped), and one slow store or
      // NATS drain on a loaded machine then costs its own time, not the sum of every service's.
      await Promise.all(
        services.map(async (c) => {
          const s = current.get(c.name)!;
          await s.ctx.db.dropDatabase().catch(() => undefined);
          await stopWithin(`the ${c.name} service`, s.stop());
        }),
      );
      // A NATS server with a user per component lets no one delete the stream: its test stops the server instead.
      if (t.natsPasswords) return;
      const nc = await connect({ servers: natsServers(t.natsUrl) });
      const jsm = await nc.jetstreamManager();
      await jsm.streams.delete(t.stream).catch(() => undefined);
      await nc.close();
    },
  };
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * A small HTTP client for the gateway: JSON in, parsed JSON (or text) out.
 * Every response is checked against the OpenAPI document (support/openapi.ts).
 */
export function client(baseUrl: string, apiKey?: string) {
  return async function request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    const h: Record<string, string> = { ...headers };
    if (apiKey && !('authorization' in h)) h.authorization = `Bearer ${apiKey}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers: h, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep the text so the assertion shows it */
    }
    checkResponse(method, path, res.status, res.headers.get('content-type') ?? '', parsed);
    checkAcceptedRequest(method, path, res.status, typeof body === 'string' ? safeJson(body) : body);
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
}
