import { type FakeServices, type ServiceHandlers, type ServiceName, startFakeServices } from '@licensing/test-support';
import { type Clock, createLogger, EventBus } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
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
  /** Another gateway over the same fakes, NATS and Redis, on the same clock (stopped with the rest). */
  extraGateway(settings?: Record<string, string>): Promise<RunningGateway>;
  /**
   * Publishes an event on the stack's stream as its owner service publishes it (the gateways' caches
   * follow them: license.*, product.updated).
   */
  publish(event: DomainEvent): Promise<void>;
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
  /** The gateways' clock (a TestClock the test moves); real time when absent. */
  clock?: Clock;
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
  let publisher: EventBus | undefined;
  const stopAll = async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await started.stopAll();
    await publisher?.close();
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
    const g = await start({ env: { ...env(settings), PORT: '0' }, clock: opts.clock });
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
    async publish(event) {
      publisher ??= await EventBus.connect({
        url: topology.natsUrl,
        subjectPrefix: topology.subjectPrefix,
        stream: topology.stream,
        name: 'gateway-test-publisher',
        log: createLogger('gateway-test-publisher', 'silent'),
      });
      await publisher.publish(event);
    },
    stopService: started.stopService,
    restartService: started.restartService,
    stop: stopAll,
  };
}
