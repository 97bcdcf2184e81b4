// Container healthcheck, shipped in the image (no curl or grpc_health_probe needed):
//   node packages/runtime/dist/grpc/healthcheck.js grpc 127.0.0.1:50053
//   node packages/runtime/dist/grpc/healthcheck.js http http://127.0.0.1:8080/readyz
// Exits 0 when the target is SERVING / answers 2xx within two seconds.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { health } from '@licensing/proto';
import { checkHealth } from './health';
import { channelCredentials, internalTls } from './internal-tls';

const TIMEOUT_MS = 2000;

async function grpc(addr: string): Promise<boolean> {
  // With mTLS between the components (GRPC_TLS_*_FILE in the container's environment), the probe uses the component's own certificate.
  const env = process.env;
  const tls = internalTls({
    GRPC_TLS_CA_FILE: env.GRPC_TLS_CA_FILE ?? '',
    GRPC_TLS_CERT_FILE: env.GRPC_TLS_CERT_FILE ?? '',
    GRPC_TLS_KEY_FILE: env.GRPC_TLS_KEY_FILE ?? '',
  });
  const probe = new health.HealthClient(addr, channelCredentials(tls));
  const { serving } = await checkHealth(probe, TIMEOUT_MS);
  probe.close();
  return serving;
}

function http(url: string): Promise<boolean> {
  const send = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    // Loopback probe of our own listener: the certificate is not what is being checked.
    const req = send(url, { timeout: TIMEOUT_MS, rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 500) < 300);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

const [kind, target] = process.argv.slice(2);
if (!target || (kind !== 'grpc' && kind !== 'http')) {
  console.error('usage: healthcheck grpc <host:port> | healthcheck http <url>');
  process.exit(2);
}
(kind === 'grpc' ? grpc(target) : http(target)).then((ok) => process.exit(ok ? 0 : 1));
