import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type Metadata,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { health } from '@licensing/proto';
import { HealthService, INTERNAL_CALLER_KEY, toServiceError } from '@licensing/runtime';

type RequestOf<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type ResponseOf<M> = M extends { responseSerialize: (v: infer R) => Buffer } ? R : never;

/** Who called the fake, as the real service would see it. */
export interface PeerCallContext {
  /** The caller its metadata names (x-internal-caller): the fake checks no token, a test may check the name. */
  caller: string;
  metadata: Metadata;
}

/**
 * One faked method: the answer to a request. A thrown AppError reaches the caller as a real service
 * sends it (the runtime's own error mapping), so the component under test sees the same gRPC status
 * and details it would get from the real peer.
 */
export type FakeHandler<M> = (request: RequestOf<M>, call: PeerCallContext) => ResponseOf<M> | Promise<ResponseOf<M>>;

/**
 * The methods a test fakes. Any other answers UNIMPLEMENTED (its caller sees what a replica that lacks
 * the method would send: unavailable) and is listed in `unfaked`, so a test can tell what it missed.
 */
export type FakeHandlers<D> = { [K in keyof D]?: FakeHandler<D[K]> };

/** A call the fake received, in arrival order. */
export interface PeerCall<D> {
  method: keyof D & string;
  request: unknown;
  caller: string;
}

export interface FakePeer<D> {
  /** host:port, what the component under test is given as the peer's address (e.g. PRODUCT_GRPC_ADDR). */
  readonly address: string;
  readonly port: number;
  /** Every call received, in order. */
  readonly calls: PeerCall<D>[];
  /** The methods called that the test did not fake, in order. */
  readonly unfaked: (keyof D & string)[];
  /** The requests one method received, in order. */
  requestsTo<K extends keyof D & string>(method: K): RequestOf<D[K]>[];
  /** Changes how methods answer from now on (a peer that starts failing, or learns a new product). */
  handle(handlers: FakeHandlers<D>): void;
  /**
   * The standard gRPC health service, as a started real service serves it: SERVING until a test says
   * otherwise (`health.setServing(false)`: a service whose store is away).
   */
  readonly health: HealthService;
  /** Stops at once: calls in flight fail as they would against a crashed peer. */
  stop(): Promise<void>;
}

/** The service's full name ("licensing.v1.ProductService"), read from its first method's path. */
const serviceName = (definition: ServiceDefinition): string => {
  const first = Object.values(definition)[0] as { path: string } | undefined;
  return first ? first.path.slice(1, first.path.lastIndexOf('/')) : 'service';
};

/**
 * Starts a real @grpc/grpc-js server on a free loopback port (or `port`) that implements `definition`
 * (the generated `…ServiceService` of @licensing/proto) with the handlers the test gives.
 */
export async function startFakePeer<D extends ServiceDefinition>(
  definition: D,
  handlers: FakeHandlers<D>,
  { port = 0 }: { port?: number } = {},
): Promise<FakePeer<D>> {
  const current: FakeHandlers<D> = { ...handlers };
  const calls: PeerCall<D>[] = [];
  const unfaked: (keyof D & string)[] = [];
  const name = serviceName(definition);
  const implementation: UntypedServiceImplementation = {};
  for (const method of Object.keys(definition) as (keyof D & string)[]) {
    implementation[method] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const caller = String(call.metadata.get(INTERNAL_CALLER_KEY)[0] ?? '');
      calls.push({ method, request: call.request, caller });
      const handler = current[method] as FakeHandler<unknown> | undefined;
      if (!handler) {
        unfaked.push(method);
        callback({ code: GrpcStatus.UNIMPLEMENTED, details: `the fake ${name} has no handler for ${method}` });
        return;
      }
      Promise.resolve()
        .then(() => handler(call.request as never, { caller, metadata: call.metadata }))
        .then(
          (response) => callback(null, response),
          (err: unknown) => callback(toServiceError(err)),
        );
    };
  }
  const server = new Server();
  server.addService(definition, implementation);
  const healthService = new HealthService();
  healthService.setServing(true);
  server.addService(health.HealthService, healthService.implementation as unknown as UntypedServiceImplementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${bound}`,
    port: bound,
    calls,
    unfaked,
    requestsTo: (method) => calls.filter((c) => c.method === method).map((c) => c.request as never),
    handle: (more) => Object.assign(current, more),
    health: healthService,
    stop: async () => server.forceShutdown(),
  };
}
