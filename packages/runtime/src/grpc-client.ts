import { credentials, Metadata, type Client, type ServiceError, type ChannelCredentials, type ClientOptions } from '@grpc/grpc-js';
import { fromServiceError } from './errors';
import { INTERNAL_TOKEN_KEY, REQUEST_ID_KEY } from './internal-auth';

type ClientCtor<C> = new (address: string, creds: ChannelCredentials, options?: Partial<ClientOptions>) => C;

// The unary methods of a generated client, as promises. Conditional types see
// the last overload: (request, metadata, options, callback).
type Unary<C> = {
  [M in keyof C as C[M] extends (req: any, md: Metadata, opts: any, cb: (e: ServiceError | null, r: any) => void) => unknown ? M : never]:
    C[M] extends (req: infer R, md: Metadata, opts: any, cb: (e: ServiceError | null, r: infer S) => void) => unknown ? (req: R, ctx?: CallOptions) => Promise<S> : never;
};

export interface CallOptions {
  requestId?: string;
  /** Per-call deadline; default: the client's (5 s unless configured). */
  timeoutMs?: number;
}

/**
 * One long-lived channel per service and process. Calls carry the internal
 * credential and the request id; failures come back as AppError with the code
 * the server chose (or service_unavailable when it could not be reached).
 */
export function createClient<C extends Client>(Ctor: ClientCtor<C>, address: string, internalToken: string, defaultTimeoutMs = 5000): { client: C; call: Unary<C>; close(): void } {
  const client = new Ctor(address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30000,
    'grpc.enable_retries': 1,
  });
  const call = new Proxy({} as Unary<C>, {
    get(_t, method: string) {
      return (req: unknown, ctx: CallOptions = {}) =>
        new Promise((resolve, reject) => {
          const md = new Metadata();
          md.set(INTERNAL_TOKEN_KEY, internalToken);
          if (ctx.requestId) md.set(REQUEST_ID_KEY, ctx.requestId);
          const deadline = Date.now() + (ctx.timeoutMs ?? defaultTimeoutMs);
          const fn = (client as unknown as Record<string, Function>)[method];
          fn.call(client, req, md, { deadline }, (err: ServiceError | null, res: unknown) => (err ? reject(fromServiceError(err)) : resolve(res)));
        });
    },
  });
  return { client, call, close: () => client.close() };
}
