import type { ServiceDefinition } from '@grpc/grpc-js';
import {
  AccountServiceService,
  CheckoutServiceService,
  LicenseServiceService,
  NotificationServiceService,
  ProductServiceService,
  WebhookServiceService,
} from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { type FakeHandlers, type FakePeer, startFakePeer } from '@licensing/test-support';
import { start } from '../../src/main';
import { services } from '../../../scripts/lib/components';
import { envFor, pageKey, type Addrs } from '../../../scripts/lib/topology';
import { setUpEvents } from '../../../scripts/lib/events-setup';
import { testTopology } from '../../../test/support/stack';

// The gateway alone, against real NATS and Redis, with every service it calls faked at the gRPC
// boundary: the account service knows one API key (of one account, full scope), and each other
// service answers with the handlers a test gives (any other method: unimplemented).

const definitions = {
  account: AccountServiceService,
  product: ProductServiceService,
  license: LicenseServiceService,
  checkout: CheckoutServiceService,
  webhook: WebhookServiceService,
  notification: NotificationServiceService,
};
type Faked = typeof definitions;

export interface GatewayOverFakes {
  url: string;
  account: string;
  /** The one API key the fake account service accepts. */
  key: string;
  peers: { [K in keyof Faked]: FakePeer<Faked[K]> };
  /** A request with the API key: its status and its body as JSON (or null). */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
}

export async function startGatewayOverFakes(
  handlers: { [K in Exclude<keyof Faked, 'account'>]?: FakeHandlers<Faked[K]> } = {},
): Promise<GatewayOverFakes> {
  const t = testTopology();
  const account = newId('acct');
  const key = `lk_full_${newId('k')}`;
  const started: Record<string, { address: string; stop(): Promise<void> }> = {};
  const accountPeer = await startFakePeer(AccountServiceService, {
    authenticate: ({ secret }) => {
      if (secret !== key) throw new AppError('unauthorized', 'invalid API key');
      return {
        account: {
          id: account,
          name: 'Acme',
          plan: 'pro',
          created_at: '',
          per_minute_limit: 0,
          per_hour_limit: 0,
          support_email: '',
        },
        key_id: 'key_1',
        scope: 'full',
      };
    },
  });
  started.account = accountPeer;
  const addrs: Addrs = { account: accountPeer.address };
  for (const s of services) {
    const name = s.name as keyof Faked;
    if (name !== 'account') {
      const fake = await startFakePeer(definitions[name] as ServiceDefinition, (handlers[name] ?? {}) as object);
      started[name] = fake;
      addrs[s.name] = fake.address;
    }
    // A service's web page the gateway proxies: nothing listens there.
    if (s.ports.http !== undefined) addrs[pageKey(s.name)] = 'http://127.0.0.1:9';
  }
  addrs[pageKey('web')] = 'http://127.0.0.1:9';
  await setUpEvents(t);
  const gateway = await start({ env: envFor('gateway', t, { port: 0, addrs }) });
  const peers = started as unknown as GatewayOverFakes['peers'];
  return {
    url: gateway.url,
    account,
    key,
    peers,
    async request(method, path, body) {
      const res = await fetch(`${gateway.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    },
    async stop() {
      await gateway.stop();
      await Promise.all(Object.values(peers).map((p) => p.stop()));
    },
  };
}
