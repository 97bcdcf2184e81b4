import type { Clock } from '@licensing/runtime';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import {
  type FakeServices,
  type GatewayWithFakeServices,
  type ServiceHandlers,
  startGatewayWithFakeServices,
} from './gateway-with-fake-services';

// The route tests' shorthand over gateway-with-fake-services.ts: one vendor whose full API key the
// fake account service accepts, every other service answering with the handlers a test gives, and a
// request helper that sends that key.

export interface GatewayOverFakes {
  url: string;
  account: string;
  /** The full-scope API key the fake account service accepts. */
  key: string;
  /** The account's validate-scope API key (an app's). */
  validateKey: string;
  peers: FakeServices;
  /** The gateway's Prometheus page (its validation cache's hits: licensing_validation_cache_total). */
  metricsUrl: string;
  publish: GatewayWithFakeServices['publish'];
  /** Another gateway over the same fakes, NATS, Redis and clock: its base and metrics URLs. */
  extraGateway(): Promise<{ url: string; metricsUrl: string }>;
  /** A request with the API key (or `apiKey`): its status and its body as JSON (or null). */
  request(
    method: string,
    path: string,
    body?: unknown,
    apiKey?: string,
  ): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
}

export async function startGatewayOverFakes(
  handlers: Omit<ServiceHandlers, 'account'> = {},
  opts: { clock?: Clock; settings?: Record<string, string> } = {},
): Promise<GatewayOverFakes> {
  const vendor = fakeVendor('pro');
  const gw = await startGatewayWithFakeServices({
    handlers: { ...handlers, account: accountHandlers([vendor]) },
    clock: opts.clock,
    settings: opts.settings,
  });
  const metricsUrl = (port: number) => `http://127.0.0.1:${port}/metrics`;
  return {
    url: gw.url,
    account: vendor.account.id,
    key: vendor.apiKey,
    validateKey: vendor.validateKey!,
    peers: gw.fakes,
    metricsUrl: metricsUrl(gw.gateway!.metricsPort),
    publish: gw.publish,
    async extraGateway() {
      const other = await gw.extraGateway();
      return { url: other.url, metricsUrl: metricsUrl(other.metricsPort) };
    },
    async request(method, path, body, apiKey = vendor.apiKey) {
      const res = await fetch(`${gw.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    },
    stop: gw.stop,
  };
}
