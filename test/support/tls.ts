import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SelfSignedCert {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

/**
 * A self-signed certificate for `cn` valid `days` (one by default), for 127.0.0.1 and localhost, written into
 * `dir` as `<name>.crt` and `<name>.key` (the gateway reads TLS from files, and reloads them when they change).
 */
export function selfSignedCert(dir: string, cn: string, name = 'tls', days = 1): SelfSignedCert {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      String(days),
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}
