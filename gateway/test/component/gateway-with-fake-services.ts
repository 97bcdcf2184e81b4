import { type FakeServices, type ServiceHandlers, type ServiceName, startFakeServices } from '@licensing/test-support';
import { start, type RunningGateway } from '../../src/main';
import { services } from '../../../scripts/lib/components';
import { envFor, pageKey, type Addrs, type Topology } from '../../../scripts/lib/topology';
import { setUpEvents } from '../../../scripts/lib/events-setup';
import { testTopology } from '../../../test/support/stack';

// The gateway alone, against real NATS and Redis, with every service of components.json faked at the
// gRPC boundary by a fake that answers with the handlers a test gives (the rest answer UNIMPLEMENTED).
// Every gateway component test starts from here: one place knows how the gateway is wired to its peers.

export type { FakeServices, ServiceHandlers, ServiceName };

export interface GatewayWithFakeServices {
  /** The gateway's base URL; '' when it was not started here (`startGateway: false`). */
  url: string;
  gateway: RunningGateway | undefined;
  fakes: FakeServices;
  topology: Topology;
  /** The settings the gateway was (or would be) started with, without PORT: for another gateway over the same fakes. */
  env: (settings?: Record<string, string>) => Record<string, string>;
  /** Another gateway over the same fakes, NATS and Redis (stopped with the rest). */
  extraGateway(settings?: Record<string, string>): Promise<RunningGateway>;
  /** Stops one fake at once, as a crashed service goes: calls in flight and new ones fail. */
  stopService(name: ServiceName): Promise<void>;
  /**
   * A new fake at the stopped one's address with the handlers it started with (not those a test set
   * later with `handle`, nor health parts it added), as a rolling update's replica.
   */
  restartService(name: ServiceName): Promise<void>;
  stop(): Promise<void>;
}

export interface Options {
  handlers?: ServiceHandlers;
  /** Gateway settings on top of the topology's (CORS_ALLOWED_ORIGINS, …). */
  settings?: Record<string, string>;
  /** False: the fakes and events only, for a test that starts the gateway its own way (as a process). */
  startGateway?: boolean;
}

export async function startGatewayWithFakeServices(opts: Options = {}): Promise<GatewayWithFakeServices> {
  const topology = testTopology();
  const started = await startFakeServices(
    services.map((s) => s.name),
    opts.handlers,
  );
  const addrs: Addrs = { ...started.addrs };
  // A service's web page and the web component's pages, which the gateway passes on: nothing listens
  // there, and no gateway test asks for them.
  for (const s of services) if (s.ports.http !== undefined) addrs[pageKey(s.name)] = 'http://127.0.0.1:9';
  addrs[pageKey('web')] = 'http://127.0.0.1:9';
  const gateways: RunningGateway[] = [];
  const stopAll = async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await started.stopAll();
  };
  try {
    await setUpEvents(topology);
  } catch (err) {
    await stopAll();
    throw err;
  }
  const env = (settings: Record<string, string> = {}) => {
    const { PORT: _port, ...rest } = envFor('gateway', topology, { port: 0, addrs });
    return { ...rest, ...opts.settings, ...settings };
  };
  const extraGateway = async (settings: Record<string, string> = {}) => {
    const g = await start({ env: { ...env(settings), PORT: '0' } });
    gateways.push(g);
    return g;
  };
  let gateway: RunningGateway | undefined;
  if (opts.startGateway !== false) {
    try {
      gateway = await extraGateway();
    } catch (err) {
      await stopAll();
      throw err;
    }
  }
  return {
    url: gateway?.url ?? '',
    gateway,
    fakes: started.fakes,
    topology,
    env,
    extraGateway,
    stopService: started.stopService,
    restartService: started.restartService,
    stop: stopAll,
  };
}
