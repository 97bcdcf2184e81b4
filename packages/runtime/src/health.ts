import { status as GrpcStatus, type ServerUnaryCall, type sendUnaryData, type ServerWritableStream } from '@grpc/grpc-js';
import { health } from '@licensing/proto';

const ServingStatus = health.HealthCheckResponse_ServingStatus;

/**
 * The standard gRPC health service. A service is NOT_SERVING until start-up has
 * connected its stores and again as soon as shutdown begins; `ready()` is also
 * consulted on every check so a lost MongoDB connection shows up at once.
 */
export class HealthService {
  private serving = false;

  constructor(private readonly ready: () => boolean = () => true) {}

  setServing(serving: boolean): void {
    this.serving = serving;
  }

  get isServing(): boolean {
    return this.serving && this.ready();
  }

  readonly implementation = {
    check: (_call: ServerUnaryCall<health.HealthCheckRequest, health.HealthCheckResponse>, callback: sendUnaryData<health.HealthCheckResponse>) => {
      callback(null, { status: this.isServing ? ServingStatus.SERVING : ServingStatus.NOT_SERVING });
    },
    watch: (call: ServerWritableStream<health.HealthCheckRequest, health.HealthCheckResponse>) => {
      call.emit('error', { code: GrpcStatus.UNIMPLEMENTED, details: 'Watch is not implemented; use Check' });
    },
  };
}
