import { CheckoutPageServiceService } from '@licensing/proto';
import {
  type FakeHandlers,
  type FakePeer,
  type FakeServices,
  type ServiceHandlers,
  type ServiceName,
  startFakePeer,
  startFakeServices,
} from '@licensing/test-support';
import { start, type RunningWeb } from '../../src/main';
import { calleesOf } from '../../../scripts/lib/components';
import { envFor, type Addrs, type Topology } from '../../../scripts/lib/topology';
import { testTopology } from '../../../test/support/stack';

// The web component alone (the dashboard, the portal, the hosted checkout page), against real Redis,
// with every service it calls faked at the gRPC boundary by a fake that answers with the handlers a
// test gives (the rest answer UNIMPLEMENTED). The checkout service's address serves either its
// CheckoutService (the dashboard's calls) or, when a test gives `checkoutPage` handlers, the
// CheckoutPageService the hosted checkout page calls: one fake serves one service definition.

export type WebPeer = ServiceName;
export type WebFakes = Partial<FakeServices>;
export type WebHandlers = ServiceHandlers;

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

export async function startWebWithFakeServices(opts: WebOptions = {}): Promise<WebWithFakeServices> {
  const topology = testTopology();
  const started = await startFakeServices(calleesOf('web'), opts.handlers);
  const addrs: Addrs = { ...started.addrs };
  let checkoutPage: FakePeer<typeof CheckoutPageServiceService> | undefined;
  const stopFakes = async () => {
    await Promise.all([started.stopAll(), checkoutPage?.stop()]);
  };
  let web: RunningWeb;
  try {
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
    fakes: started.fakes,
    checkoutPage,
    topology,
    stopService: started.stopService,
    restartService: started.restartService,
    async stop() {
      await web.stop();
      await stopFakes();
    },
  };
}
