import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { AccountServiceClient } from '@licensing/proto';
import { createClient, type Clock } from '@licensing/runtime';
import { start as startAccount } from '../../services/account/src/main';
import { start as startProduct } from '../../services/product/src/main';
import { start as startLicense } from '../../services/license/src/main';
import { start as startCheckout } from '../../services/checkout/src/main';
import { start as startWebhook } from '../../services/webhook/src/main';
import { freePort } from '../../scripts/lib/net';
import { start as startGateway } from '../../gateway/src/main';
import { credentialOf, envFor, type Topology } from '../../scripts/lib/topology';
import { checkAcceptedRequest, checkResponse } from './openapi';

// A whole system in this test process: five services and the gateway on
// random ports, over the run's FerretDB and the machine's NATS, with database
// names, subjects and stream unique to this stack so tests never see each other.

export interface Stack {
  url: string;
  topology: Topology;
  admin: ReturnType<typeof createClient<AccountServiceClient>>['call'];
  addrs: { account: string; product: string; license: string; checkout: string; checkoutPage: string; webhook: string };
  /** Where each component serves Prometheus /metrics. */
  metricsUrls: Record<'gateway' | 'account' | 'product' | 'license' | 'checkout' | 'webhook', string>;
  newAccount(plan?: string): Promise<{ accountId: string; apiKey: string }>;
  stopGateway(): Promise<void>;
  /** Another gateway over the same services (stopped with the stack), e.g. with other settings. */
  extraGateway(config?: Record<string, string>): Promise<{ url: string; metricsUrl: string; stop(): Promise<void> }>;
  /** Starts the webhook service again after stopService('webhook') (stopped with the stack). */
  restartWebhook(): Promise<void>;
  /** A second instance of the licence service over the same database and stream (stopped with the stack). */
  extraLicenseService(): Promise<void>;
  /** Stops one service (its database is kept) to see how the rest copes. */
  stopService(name: 'account' | 'product' | 'license' | 'checkout' | 'webhook'): Promise<void>;
  stop(): Promise<void>;
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
    webhookDispatchIntervalMs: 100,
    host: '127.0.0.1',
    mailUrl: `dir://${join(tmpdir(), `licensing-mail-${id}`)}`,
    metricsAnyPort: true,
    nodeEnv: 'test',
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    outboxIntervalMs: 200,
    statsFlushIntervalMs: 200,
    expirySweepIntervalMs: 200,
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
): Promise<Stack> {
  const t = testTopology(overrides);
  const account = await startAccount({ env: envFor.account(t, 0), clock });
  const product = await startProduct({ env: envFor.product(t, 0), clock });
  const addrs = {
    account: `127.0.0.1:${account.port}`,
    product: `127.0.0.1:${product.port}`,
    license: '',
    checkout: '',
    checkoutPage: '',
    webhook: '',
  };
  const license = await startLicense({ env: envFor.license(t, 0, addrs.product), clock });
  addrs.license = `127.0.0.1:${license.port}`;
  // The gateway's port is chosen first so checkout session URLs can name it.
  const gatewayPort = await freePort();
  const pagePort = await freePort();
  const checkout = await startCheckout({
    env: envFor.checkout(t, 0, pagePort, addrs, `http://127.0.0.1:${gatewayPort}`),
    clock,
  });
  addrs.checkout = `127.0.0.1:${checkout.port}`;
  addrs.checkoutPage = `http://127.0.0.1:${pagePort}`;
  // A fixed port (not 0) because restartWebhook() binds the same one again later.
  const webhook = await startWebhook({ env: envFor.webhook(t, await freePort()), clock });
  addrs.webhook = `127.0.0.1:${webhook.port}`;
  const gateway = await startGateway({ env: { ...envFor.gateway(t, gatewayPort, addrs), ...gatewayConfig }, clock });
  const admin = createClient(AccountServiceClient, addrs.account, credentialOf(t, 'operator'));

  const services = [webhook, checkout, license, product, account];
  let currentWebhook = webhook;
  const extras: { stop(): Promise<void> }[] = [];
  const metricsUrl = (port: number) => `http://127.0.0.1:${port}/metrics`;
  return {
    url: gateway.url,
    topology: t,
    metricsUrls: {
      gateway: metricsUrl(gateway.metricsPort),
      account: metricsUrl(account.metricsPort),
      product: metricsUrl(product.metricsPort),
      license: metricsUrl(license.metricsPort),
      checkout: metricsUrl(checkout.metricsPort),
      webhook: metricsUrl(webhook.metricsPort),
    },
    admin: admin.call,
    addrs,
    // Enterprise by default so tests about other things never meet a rate limit.
    async newAccount(plan = 'enterprise') {
      const out = await admin.call.createAccount({ name: `Vendor ${randomBytes(2).toString('hex')}`, plan });
      return { accountId: out.account!.id, apiKey: out.secret };
    },
    stopGateway: () => gateway.stop(),
    async extraGateway(config = {}) {
      const g = await startGateway({ env: { ...envFor.gateway(t, 0, addrs), ...gatewayConfig, ...config }, clock });
      extras.push(g);
      return { url: g.url, metricsUrl: metricsUrl(g.metricsPort), stop: g.stop };
    },
    stopService: (name) => ({ account, product, license, checkout, webhook: currentWebhook })[name].stop(),
    async restartWebhook() {
      currentWebhook = await startWebhook({ env: envFor.webhook(t, Number(addrs.webhook.split(':')[1])), clock });
      extras.push(currentWebhook);
    },
    async extraLicenseService() {
      extras.push(await startLicense({ env: envFor.license(t, 0, addrs.product), clock }));
    },
    async stop() {
      admin.close();
      for (const g of extras) await g.stop();
      await gateway.stop();
      for (const s of services) {
        await s.ctx.db.dropDatabase().catch(() => undefined);
        await s.stop();
      }
      // A NATS server with a user per component lets no one delete the stream: its test stops the server instead.
      if (t.natsPasswords) return;
      const nc = await connect({ servers: t.natsUrl });
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
