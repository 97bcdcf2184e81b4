import {
  AccountServiceService,
  CheckoutPageServiceService,
  CheckoutServiceService,
  LicenseServiceService,
  NotificationServiceService,
  ProductServiceService,
  WebhookServiceService,
} from '@licensing/proto';
import { type FakeHandlers, type FakePeer, startFakePeer } from '@licensing/test-support';
import { start, type RunningWeb } from '../../src/main';
import { calleesOf } from '../../../scripts/lib/components';
import { envFor, type Addrs, type Topology } from '../../../scripts/lib/topology';
import { testTopology } from '../../../test/support/stack';

// The web component alone (the dashboard, the portal, the hosted checkout page), against real Redis,
// with every service it calls faked at the gRPC boundary by a fake that answers with the handlers a
// test gives (the rest answer UNIMPLEMENTED). The checkout service's address serves either its
// CheckoutService (the dashboard's calls) or, when a test gives `checkoutPage` handlers, the
// CheckoutPageService the hosted checkout page calls: one fake serves one service definition.

const definitions = {
  account: AccountServiceService,
  product: ProductServiceService,
  license: LicenseServiceService,
  checkout: CheckoutServiceService,
  webhook: WebhookServiceService,
  notification: NotificationServiceService,
};

type Definitions = typeof definitions;
export type WebPeer = keyof Definitions;
export type WebFakes = { [N in WebPeer]?: FakePeer<Definitions[N]> };
export type WebHandlers = { [N in WebPeer]?: FakeHandlers<Definitions[N]> };

export interface WebWithFakeServices {
  url: string;
  web: RunningWeb;
  fakes: WebFakes;
  /** The CheckoutPageService fake, when `checkoutPage` handlers were given. */
  checkoutPage?: FakePeer<typeof CheckoutPageServiceService>;
  topology: Topology;
  /** Stops one fake at once, as a crashed service goes. */
  stopService(name: WebPeer): Promise<void>;
  /** A new fake at the stopped one's address, with the handlers it started with. */
  restartService(name: WebPeer): Promise<void>;
  stop(): Promise<void>;
}

export interface WebOptions {
  handlers?: WebHandlers;
  checkoutPage?: FakeHandlers<typeof CheckoutPageServiceService>;
  /** Web settings on top of the topology's (throttle limits, REDIS_TIMEOUT_MS, …). */
  settings?: Record<string, string>;
}

const startFake = <N extends WebPeer>(name: N, handlers: WebHandlers, port = 0) =>
  startFakePeer(definitions[name], (handlers[name] ?? {}) as FakeHandlers<Definitions[N]>, { port }) as Promise<
    FakePeer<Definitions[N]>
  >;

export async function startWebWithFakeServices(opts: WebOptions = {}): Promise<WebWithFakeServices> {
  const handlers = opts.handlers ?? {};
  const topology = testTopology();
  const fakes = {} as Record<WebPeer, FakePeer<never>>;
  let checkoutPage: FakePeer<typeof CheckoutPageServiceService> | undefined;
  const addrs: Addrs = {};
  const stopFakes = async () => {
    await Promise.all([...Object.values(fakes), ...(checkoutPage ? [checkoutPage] : [])].map((f) => f.stop()));
  };
  let web: RunningWeb;
  try {
    for (const callee of calleesOf('web')) {
      const name = callee as WebPeer;
      if (!definitions[name]) throw new Error(`no fake for the ${callee} service: add its definition here`);
      fakes[name] = (await startFake(name, handlers)) as FakePeer<never>;
      addrs[name] = fakes[name].address;
    }
    if (opts.checkoutPage) {
      checkoutPage = await startFakePeer(CheckoutPageServiceService, opts.checkoutPage);
      addrs.checkout = checkoutPage.address;
    }
    web = await start({ env: { ...envFor('web', topology, { port: 0, addrs }), ...opts.settings } });
  } catch (err) {
    await stopFakes();
    throw err;
  }
  return {
    url: web.url,
    web,
    fakes: fakes as unknown as WebFakes,
    checkoutPage,
    topology,
    stopService: (name) => fakes[name].stop(),
    async restartService(name) {
      fakes[name] = (await startFake(name, handlers, fakes[name].port)) as FakePeer<never>;
    },
    async stop() {
      await web.stop();
      await stopFakes();
    },
  };
}
