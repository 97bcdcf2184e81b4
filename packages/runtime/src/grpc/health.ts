import {
  status as GrpcStatus,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import { health } from '@licensing/proto';

const ServingStatus = health.HealthCheckResponse_ServingStatus;
export const LIVENESS = 'liveness';

/**
 * The standard gRPC health service. A service is NOT_SERVING until start-up has
 * connected its stores and again as soon as shutdown begins; `ready()` is also
 * consulted on every check so a lost MongoDB connection shows up at once.
 */
export class HealthService {
  private serving = false;
  /** Parts of a service a caller may ask about by name (checkout's "payments"): SERVING while true. */
  private readonly parts = new Map<string, () => boolean>();

  constructor(
    private readonly ready: () => boolean = () => true,
    /** Told of every Check answered, by probe ('readiness' or 'liveness'): for the metric. */
    private readonly checked: (probe: 'readiness' | 'liveness') => void = () => undefined,
  ) {}

  setServing(serving: boolean): void {
    this.serving = serving;
  }

  get isServing(): boolean {
    return this.serving && this.ready();
  }

  /** A named part of this service that Check answers for (SERVING while `up()`, and the service is). */
  addPart(name: string, up: () => boolean): void {
    if (name === '' || name === LIVENESS) throw new Error(`"${name}" is not a part's name`);
    this.parts.set(name, up);
  }

  readonly implementation = {
    check: (
      call: ServerUnaryCall<health.HealthCheckRequest, health.HealthCheckResponse>,
      callback: sendUnaryData<health.HealthCheckResponse>,
    ) => {
      const service = call.request.service;
      // "" is readiness (stores up, not shutting down). "liveness" only says the
      // process answers: a MongoDB outage must not make Kubernetes restart pods.
      if (service === LIVENESS) {
        this.checked('liveness');
        return callback(null, { status: ServingStatus.SERVING });
      }
      const part = this.parts.get(service);
      if (part)
        return callback(null, { status: this.isServing && part() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING });
      if (service !== '')
        return callback({
          code: GrpcStatus.NOT_FOUND,
          details: `unknown service "${service}"; ask "" (readiness), "liveness"${[...this.parts.keys()].map((p) => ` or "${p}"`).join('')}`,
        });
      this.checked('readiness');
      callback(null, { status: this.isServing ? ServingStatus.SERVING : ServingStatus.NOT_SERVING });
    },
    watch: (call: ServerWritableStream<health.HealthCheckRequest, health.HealthCheckResponse>) => {
      call.emit('error', { code: GrpcStatus.UNIMPLEMENTED, details: 'Watch is not implemented; use Check' });
    },
  };
}

/** One Check call with a deadline: SERVING or not (unreachable counts as not), and the round trip. */
export function checkHealth(
  client: health.HealthClient,
  timeoutMs: number,
  service = '',
): Promise<{ serving: boolean; latencyMs: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    client.check({ service }, { deadline: Date.now() + timeoutMs } as never, (err, res) => {
      resolve({
        serving: !err && res?.status === ServingStatus.SERVING,
        latencyMs: Math.round((performance.now() - started) * 10) / 10,
      });
    });
  });
}
