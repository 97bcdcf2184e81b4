import {
  AccountServiceService,
  CheckoutServiceService,
  LicenseServiceService,
  NotificationServiceService,
  ProductServiceService,
  WebhookServiceService,
} from '@licensing/proto';
import { type Clock, createLogger, EventBus } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import { type FakeHandlers, type FakePeer, startFakePeer } from '@licensing/test-support';
import { start, type RunningGateway } from '../../src/main';
import { services } from '../../../scripts/lib/components';
import { envFor, pageKey, type Addrs, type Topology } from '../../../scripts/lib/topology';
import { setUpEvents } from '../../../scripts/lib/events-setup';
import { testTopology } from '../../../test/support/stack';

// The gateway alone, against real NATS and Redis, with every service of components.json faked at the
// gRPC boundary by a fake that answers with the handlers a test gives (the rest answer UNIMPLEMENTED).
// Every gateway component test starts from here: one place knows how the gateway is wired to its peers.

const definitions = {
  account: AccountServiceService,
  product: ProductServiceService,
  license: LicenseServiceService,
  checkout: CheckoutServiceService,
  webhook: WebhookServiceService,
  notification: NotificationServiceService,
};

type Definitions = typeof definitions;
export type ServiceName = keyof Definitions;
export type FakeServices = { [N in ServiceName]: FakePeer<Definitions[N]> };
export type ServiceHandlers = { [N in ServiceName]?: FakeHandlers<Definitions[N]> };

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

const startFake = <N extends ServiceName>(name: N, handlers: ServiceHandlers, port = 0) =>
  startFakePeer(definitions[name], (handlers[name] ?? {}) as FakeHandlers<Definitions[N]>, { port }) as Promise<
    FakeServices[N]
  >;

export async function startGatewayWithFakeServices(opts: Options = {}): Promise<GatewayWithFakeServices> {
  const handlers = opts.handlers ?? {};
  const topology = testTopology();
  const fakes = {} as Record<ServiceName, FakePeer<never>>;
  const addrs: Addrs = {};
  const gateways: RunningGateway[] = [];
  let publisher: EventBus | undefined;
  const stopAll = async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await Promise.all(Object.values(fakes).map((f) => f.stop()));
    await publisher?.close();
  };
  try {
    for (const s of services) {
      const name = s.name as ServiceName;
      if (!definitions[name]) throw new Error(`no fake for the ${s.name} service: add its definition here`);
      fakes[name] = (await startFake(name, handlers)) as FakePeer<never>;
      addrs[name] = fakes[name].address;
      // A service's web page the gateway proxies: nothing listens there, and no gateway test asks for it.
      if (s.ports.http !== undefined) addrs[pageKey(s.name)] = 'http://127.0.0.1:9';
    }
    // The web component's pages, passed on by the gateway: nothing listens there either.
    addrs[pageKey('web')] = 'http://127.0.0.1:9';
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
    fakes: fakes as unknown as FakeServices,
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
    stopService: (name) => fakes[name].stop(),
    async restartService(name) {
      fakes[name] = (await startFake(name, handlers, fakes[name].port)) as FakePeer<never>;
    },
    stop: stopAll,
  };
}
