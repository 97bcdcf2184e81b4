import {
  AccountServiceService,
  CheckoutServiceService,
  LicenseServiceService,
  NotificationServiceService,
  ProductServiceService,
  WebhookServiceService,
} from '@licensing/proto';
import { type FakeHandlers, type FakePeer, startFakePeer } from './fake-peer';

// Every service a component may call, faked by name: the gateway's and the web component's component
// tests start the fakes of what they call from here, so one place maps a service's name to its definition.

export const serviceDefinitions = {
  account: AccountServiceService,
  product: ProductServiceService,
  license: LicenseServiceService,
  checkout: CheckoutServiceService,
  webhook: WebhookServiceService,
  notification: NotificationServiceService,
};

export type ServiceDefinitions = typeof serviceDefinitions;
export type ServiceName = keyof ServiceDefinitions;
export type FakeServices = { [N in ServiceName]: FakePeer<ServiceDefinitions[N]> };
export type ServiceHandlers = { [N in ServiceName]?: FakeHandlers<ServiceDefinitions[N]> };

export interface StartedFakes {
  /** The fakes by service name (only those started). */
  fakes: FakeServices;
  /** Each started fake's host:port by service name. */
  addrs: Partial<Record<ServiceName, string>>;
  /** Stops one fake at once, as a crashed service goes: calls in flight and new ones fail. */
  stopService(name: ServiceName): Promise<void>;
  /** A new fake at the stopped one's address, with the handlers it started with. */
  restartService(name: ServiceName): Promise<void>;
  stopAll(): Promise<void>;
}

/** Fakes of the named services, each answering with its `handlers` (the rest UNIMPLEMENTED). */
export async function startFakeServices(
  names: readonly string[],
  handlers: ServiceHandlers = {},
): Promise<StartedFakes> {
  const fakes = {} as Record<ServiceName, FakePeer<never>>;
  const addrs: Partial<Record<ServiceName, string>> = {};
  const startOne = (name: ServiceName, port = 0) =>
    startFakePeer(serviceDefinitions[name], (handlers[name] ?? {}) as FakeHandlers<never>, { port }) as Promise<
      FakePeer<never>
    >;
  const stopAll = async () => {
    await Promise.all(Object.values(fakes).map((f) => f.stop()));
  };
  try {
    for (const name of names) {
      if (!(name in serviceDefinitions)) throw new Error(`no fake for the ${name} service: add its definition here`);
      const service = name as ServiceName;
      fakes[service] = await startOne(service);
      addrs[service] = fakes[service].address;
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    fakes: fakes as unknown as FakeServices,
    addrs,
    stopService: (name) => fakes[name].stop(),
    async restartService(name) {
      fakes[name] = await startOne(name, fakes[name].port);
    },
    stopAll,
  };
}
