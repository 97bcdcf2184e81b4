import { Server, ServerCredentials, status as GrpcStatus, type ServiceDefinition, type ServerUnaryCall, type sendUnaryData, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { health } from '@licensing/proto';
import { toServiceError, AppError } from './errors';
import { HealthService } from './health';
import { REQUEST_ID_KEY, tokenMatches } from './internal-auth';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { isStoreTimeout, outOfTime } from './query-deadline';
import { withCallScope } from './request-scope';

/** What a handler gets besides its request: who is calling and a logger that says so. */
export interface CallContext {
  requestId: string;
  log: Logger;
}

/** Handlers are plain async functions; the server adapts them to grpc-js. */
export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

// Maps a grpc-js service definition to the async handlers that implement it.
export type Handlers<D> = {
  [M in keyof D]: D[M] extends { requestDeserialize: (b: Buffer) => infer Req; responseSerialize: (v: infer Res) => Buffer } ? UnaryHandler<Req, Res> : never;
};

export interface GrpcServerOptions {
  internalToken: string;
  log: Logger;
  metrics: Metrics;
  ready?: () => boolean;
}

const CODE_NAMES = Object.fromEntries(Object.entries(GrpcStatus).filter(([, v]) => typeof v === 'number').map(([k, v]) => [v, k])) as Record<number, string>;

/**
 * One gRPC server per service: health checking, the internal-credential check
 * on every call (health excepted), request ids into log lines, and the one
 * mapping from thrown errors to gRPC status codes.
 */
export class GrpcServer {
  readonly server = new Server({
    'grpc.max_receive_message_length': 1024 * 1024,
    // Clients reconnect every few minutes, and a reconnect re-resolves the
    // service name: replicas added by an autoscaler get traffic without any
    // client restart (grpc-js re-resolves DNS only when a connection ends).
    'grpc.max_connection_age_ms': 5 * 60_000,
    'grpc.max_connection_age_grace_ms': 30_000,
  });
  readonly health: HealthService;
  private readonly handled;
  private readonly latency;

  constructor(private readonly opts: GrpcServerOptions) {
    this.health = new HealthService(opts.ready);
    this.handled = opts.metrics.counter('licensing_grpc_server_handled_total', ['method', 'code']);
    this.latency = opts.metrics.histogram('licensing_grpc_server_handling_seconds', ['method']);
    this.server.addService(health.HealthService, this.health.implementation as unknown as UntypedServiceImplementation);
  }

  add<D extends ServiceDefinition>(definition: D, handlers: Handlers<D>): void {
    const impl: UntypedServiceImplementation = {};
    for (const [method, handler] of Object.entries(handlers) as [string, UnaryHandler<unknown, unknown>][]) {
      const path = (definition as Record<string, { path: string }>)[method].path;
      impl[method] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => this.dispatch(path, handler, call, callback);
    }
    this.server.addService(definition, impl);
  }

  private dispatch(path: string, handler: UnaryHandler<unknown, unknown>, call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>): void {
    const method = path.slice(path.lastIndexOf('/') + 1);
    if (!tokenMatches(this.opts.internalToken, call.metadata)) {
      this.handled.inc({ method, code: 'UNAUTHENTICATED' });
      callback({ code: GrpcStatus.UNAUTHENTICATED, details: 'missing or wrong internal credential' });
      return;
    }
    const rid = call.metadata.get(REQUEST_ID_KEY)[0];
    const requestId = typeof rid === 'string' ? rid : '';
    const given = call.getDeadline();
    const deadline = given instanceof Date ? given.getTime() : given;
    if (deadline <= Date.now()) {
      // The caller has already given up (it waited in a queue, or a slow hop before us used its time).
      this.handled.inc({ method, code: 'DEADLINE_EXCEEDED' });
      callback({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'the deadline passed before the call started' });
      return;
    }
    const log = this.opts.log.child({ request_id: requestId, rpc: path });
    const timer = this.latency.startTimer({ method });
    const reply = (err: Parameters<sendUnaryData<unknown>>[0], res?: unknown) => {
      const seconds = timer();
      const code = CODE_NAMES[err ? (err.code ?? GrpcStatus.UNKNOWN) : GrpcStatus.OK] ?? 'UNKNOWN';
      this.handled.inc({ method, code });
      log.debug({ code, ms: Math.round(seconds * 1e4) / 10 }, 'rpc');
      callback(err, res);
    };
    withCallScope(requestId, deadline, () => handler(call.request, { requestId, log }))
      .then((res) => reply(null, res))
      .catch((thrown: unknown) => {
        const err = isStoreTimeout(thrown) ? outOfTime() : thrown;
        if (!(err instanceof AppError) || err.code === 'internal') log.error({ err }, 'rpc failed');
        let mapped;
        try {
          mapped = toServiceError(err);
        } catch (mapErr) {
          log.error({ err: mapErr }, 'could not map an error to a gRPC status');
          mapped = { code: GrpcStatus.INTERNAL, details: 'internal error' };
        }
        reply(mapped);
      });
  }

  async listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
    });
  }

  /** Stops taking new calls and waits for in-flight ones, up to `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.health.setServing(false);
    const drained = new Promise<void>((resolve) => {
      this.server.tryShutdown(() => resolve());
    });
    const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    await Promise.race([drained, timer]);
    this.server.forceShutdown();
  }
}
