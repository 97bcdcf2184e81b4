import { readFileSync } from 'node:fs';
import { credentials, ServerCredentials, type ChannelCredentials } from '@grpc/grpc-js';
import type { ServerUnaryCall } from '@grpc/grpc-js';

// Optional mutual TLS between the components: every component has a
// certificate whose common name is its own name (deploy/make-secrets.sh makes
// them, signed by one internal CA). With it, a caller's token must come with
// the caller's certificate; without it, calls are plaintext (loopback, or a
// network the operator trusts).

export interface InternalTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** The mTLS material the settings name, or undefined when none is set; half a set is an error. */
export function internalTls(config: {
  GRPC_TLS_CA_FILE: string;
  GRPC_TLS_CERT_FILE: string;
  GRPC_TLS_KEY_FILE: string;
}): InternalTls | undefined {
  const files = [config.GRPC_TLS_CA_FILE, config.GRPC_TLS_CERT_FILE, config.GRPC_TLS_KEY_FILE];
  if (files.every((f) => !f)) return undefined;
  if (files.some((f) => !f))
    throw new Error('GRPC_TLS_CA_FILE, GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE must be set together');
  return { ca: readFileSync(files[0]), cert: readFileSync(files[1]), key: readFileSync(files[2]) };
}

export const serverCredentials = (tls?: InternalTls): ServerCredentials =>
  tls
    ? ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true)
    : ServerCredentials.createInsecure();

export const channelCredentials = (tls?: InternalTls): ChannelCredentials =>
  tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createInsecure();

/** The common name of the client certificate of a call over mTLS (undefined over plaintext). */
export function peerCommonName(call: ServerUnaryCall<unknown, unknown>): string | undefined {
  const cn = call.getAuthContext?.()?.sslPeerCertificate?.subject?.CN;
  return Array.isArray(cn) ? cn[0] : cn;
}
