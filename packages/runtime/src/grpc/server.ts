import {
  Server,
  status as GrpcStatus,
  type ServiceDefinition,
  type ServerUnaryCall,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { health } from '@licensing/proto';
import { toServiceError, AppError } from '../core/errors';
import { HealthService } from './health';
import {
  allowed,
  authenticateCaller,
  parseCallers,
  REQUEST_ID_KEY,
  TRACEPARENT_KEY,
  type AccessPolicy,
  type InternalCaller,
} from './internal-auth';
import { peerCommonName, serverCredentials, type InternalTls } from './internal-tls';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { endSpan, remoteContext, SpanKind, type Tracing } from '../observability/tracing';
import { isStoreTimeout } from '../store/query-deadline';
import { outOfTime } from '../core/time-budget';
import { withCallScope } from '../core/request-scope';
import { decodeOrigin, REQUEST_ORIGIN_KEY } from '../core/request-origin';
import { findForbiddenText } from '../security/text';
import { isStoreUnavailable, storeUnavailable } from '../store/store-errors';

/** What a handler gets besides its request: who is calling and a logger that says so. */
export interface CallContext {
  requestId: string;
  /** The authenticated component that made the call. */
  caller: InternalCaller;
  log: Logger;
}

/** Handlers are plain async functions; the server adapts them to grpc-js. */
export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

// Maps a grpc-js service definition to the async handlers that implement it.
/** Per caller, the methods of service D it may call (everything else: PERMISSION_DENIED). */
export type AccessPolicyOf<D> = Partial<Record<InternalCaller, readonly (keyof D & string)[]>>;

export type Handlers<D> = {
  [M in keyof D]: D[M] extends {
    requestDeserialize: (b: Buffer) => infer Req;
    responseSerialize: (v: infer Res) => Buffer;
  }
    ? UnaryHandler<Req, Res>
    : never;
};

export interface GrpcServerOptions {
  /** INTERNAL_CALLERS: each caller's token digest. */
  callers: string;
  /** mTLS: the caller's certificate must name the caller its token claims. */
  tls?: InternalTls;
  log: Logger;
  metrics: Metrics;
  ready?: () => boolean;
  /** The service's tracing, when on: a call that carries a `traceparent` is served in a span of its own. */
  tracing?: Tracing;
}

const CODE_NAMES = Object.fromEntries(
  Object.entries(GrpcStatus)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [v, k]),
) as Record<number, string>;

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
  private readonly callers;
  private readonly handled;
  private readonly latency;

  constructor(private readonly opts: GrpcServerOptions) {
    const healthChecks = opts.metrics.counter('licensing_grpc_health_checks_total', ['probe']);
    this.health = new HealthService(opts.ready, (probe) => healthChecks.inc({ probe }));
    this.callers = parseCallers(opts.callers);
    this.handled = opts.metrics.counter('licensing_grpc_server_handled_total', ['method', 'code']);
    this.latency = opts.metrics.histogram('licensing_grpc_server_handling_seconds', ['method']);
    this.server.addService(health.HealthService, this.health.implementation as unknown as UntypedServiceImplementation);
  }

  /** Serves a service; each caller may call only the methods `access` lists for it. */
  add<D extends ServiceDefinition>(definition: D, handlers: Handlers<D>, access: AccessPolicyOf<D>): void {
    const impl: UntypedServiceImplementation = {};
    for (const [method, handler] of Object.entries(handlers) as [string, UnaryHandler<unknown, unknown>][]) {
      const path = (definition as Record<string, { path: string }>)[method].path;
      impl[method] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        this.dispatch(path, method, access as AccessPolicy, handler, call, callback);
    }
    this.server.addService(definition, impl);
  }

  private dispatch(
    path: string,
    key: string,
    access: AccessPolicy,
    handler: UnaryHandler<unknown, unknown>,
    call: ServerUnaryCall<unknown, unknown>,
    callback: sendUnaryData<unknown>,
  ): void {
    const method = path.slice(path.lastIndexOf('/') + 1);
    const caller = authenticateCaller(this.callers, call.metadata);
    if (!caller || (this.opts.tls && peerCommonName(call) !== caller)) {
      this.handled.inc({ method, code: 'UNAUTHENTICATED' });
      callback({ code: GrpcStatus.UNAUTHENTICATED, details: 'missing or wrong internal credential' });
      return;
    }
    if (!allowed(access, caller, key)) {
      this.handled.inc({ method, code: 'PERMISSION_DENIED' });
      this.opts.log.warn({ caller, rpc: path }, 'refused an internal call the caller is not allowed to make');
      callback({ code: GrpcStatus.PERMISSION_DENIED, details: `${caller} may not call ${method}` });
      return;
    }
    const rid = call.metadata.get(REQUEST_ID_KEY)[0];
    const requestId = typeof rid === 'string' ? rid : '';
    // Who asked, as the (authenticated) caller says: written on the events this call makes.
    const origin = decodeOrigin(call.metadata.get(REQUEST_ORIGIN_KEY)[0]);
    const given = call.getDeadline();
    const deadline = given instanceof Date ? given.getTime() : given;
    if (deadline <= Date.now()) {
      // The caller has already given up (it waited in a queue, or a slow hop before us used its time).
      this.handled.inc({ method, code: 'DEADLINE_EXCEEDED' });
      callback({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'the deadline passed before the call started' });
      return;
    }
    const log = this.opts.log.child({ request_id: requestId, rpc: path, caller });
    const timer = this.latency.startTimer({ method });
    const tracing = this.opts.tracing;
    const parent = tracing && remoteContext(call.metadata.get(TRACEPARENT_KEY)[0]);
    const traced = parent ? tracing.start(path.slice(1), SpanKind.SERVER, parent, { 'rpc.system': 'grpc' }) : undefined;
    const reply = (err: Parameters<sendUnaryData<unknown>>[0], res?: unknown) => {
      const seconds = timer();
      const code = CODE_NAMES[err ? (err.code ?? GrpcStatus.UNKNOWN) : GrpcStatus.OK] ?? 'UNKNOWN';
      this.handled.inc({ method, code });
      log.debug({ code, ms: Math.round(seconds * 1e4) / 10 }, 'rpc');
      if (traced) endSpan(traced.span, err ? code : false, { 'rpc.grpc.status_code': err?.code ?? GrpcStatus.OK });
      callback(err, res);
    };
    withCallScope(
      requestId,
      deadline,
      async () => {
        // Defence in depth behind the edges: no caller stores text the store cannot hold (see text.ts).
        const bad = findForbiddenText(call.request);
        if (bad) throw new AppError('invalid_request', bad.message, [bad]);
        return handler(call.request, { requestId, caller, log });
      },
      traced?.context,
      origin,
    )
      .then((res) => reply(null, res))
      .catch((thrown: unknown) => {
        // A store that is away is the caller's 503 (retry later), not a bug: see store-errors.ts.
        const away = isStoreUnavailable(thrown);
        const err = isStoreTimeout(thrown) ? outOfTime() : away ? storeUnavailable() : thrown;
        if (away) log.warn({ err: thrown }, 'rpc failed: the store is unavailable');
        else if (!(err instanceof AppError) || err.code === 'internal') log.error({ err }, 'rpc failed');
        let mapped: ReturnType<typeof toServiceError>;
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
      this.server.bindAsync(`${host}:${port}`, serverCredentials(this.opts.tls), (err, bound) =>
        err ? reject(err) : resolve(bound),
      );
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

/**
 * Runs one item of a batched call (ValidateLicenses) as a call of its own: its own request id (log
 * lines and events say which request) under the batch's deadline and, when traced, in a span of its
 * own request's trace. Without either it runs in the batch's scope.
 */
export async function asOwnCall<T>(
  tracing: Tracing | undefined,
  name: string,
  item: { requestId?: string; traceparent?: string },
  deadline: number,
  fn: () => Promise<T>,
): Promise<T> {
  const parent = tracing && remoteContext(item.traceparent);
  const traced = parent ? tracing.start(name, SpanKind.SERVER, parent, { 'rpc.system': 'grpc' }) : undefined;
  if (!item.requestId && !traced) return fn();
  let failure: string | undefined;
  try {
    return await withCallScope(item.requestId ?? '', deadline, fn, traced?.context);
  } catch (err) {
    failure = err instanceof AppError ? err.code : 'internal';
    throw err;
  } finally {
    if (traced) endSpan(traced.span, failure);
  }
}
