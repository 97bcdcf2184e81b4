import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { License, Product } from '@licensing/proto';
import { start as startGateway } from '../../src/main';
import { spawnComponent } from '../../../scripts/lib/launch';
import { freePort, waitForPort } from '../../../scripts/lib/net';
import { client } from '../../../test/support/stack';
import { checkResponse } from '../../../test/support/openapi';
import { eventually } from '../../../test/support/eventually';
import { selfSignedCert } from '../../../test/support/tls';
import { accountHandlers, fakeVendor, licenseHandlers, productHandlers } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// TLS termination in the gateway with a certificate made here, reloaded on SIGHUP; HSTS; and the
// production rule: plain HTTP is refused (426) unless a configured proxy says the client used HTTPS.
// The TLS gateway is a real process from dist (signals reach it as they would in production: build
// first, as `npm test` does) over services faked in this process; the production-mode gateways are
// started in-process over the same fakes.

const dir = mkdtempSync(join(tmpdir(), 'licensing-tls-'));
const certFile = join(dir, 'tls.crt');
const keyFile = join(dir, 'tls.key');

/** A fresh certificate's text (the test writes it where the gateway reads it). */
const makeCert = (cn: string, days = 1) => selfSignedCert(dir, cn, 'new', days);

/** When a certificate expires, in Unix seconds (what licensing_tls_certificate_expiry_timestamp_seconds says). */
const expiryOf = (pem: string) => Date.parse(new X509Certificate(pem).validTo) / 1000;

/** The gateway's certificate-expiry metric, from its /metrics (its port is in its log: METRICS_PORT=0). */
async function servedExpiry(): Promise<number | undefined> {
  const listening = readFileSync(join(dir, 'gateway.log'), 'utf8')
    .split('\n')
    .find((l) => l.includes('"gateway listening"'));
  const text = await (await fetch(`http://127.0.0.1:${JSON.parse(listening!).metrics_port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('licensing_tls_certificate_expiry_timestamp_seconds{'));
  expect(line ?? '').toContain('certificate="https"');
  return line ? Number(line.split(' ').pop()) : undefined;
}

interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  peerCN: string;
}

/** An HTTPS call that trusts only `ca` (a fresh connection each time, so a reloaded certificate shows). */
function httpsCall(
  url: string,
  ca: string,
  method: string,
  path: string,
  apiKey?: string,
  body?: unknown,
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      {
        method,
        ca,
        agent: false,
        headers: {
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        const peer =
          res.socket && 'getPeerCertificate' in res.socket
            ? (res.socket as import('node:tls').TLSSocket).getPeerCertificate()
            : undefined;
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          const parsed = text ? JSON.parse(text) : undefined;
          checkResponse(method, path, res.statusCode!, String(res.headers['content-type'] ?? ''), parsed ?? '');
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: parsed,
            peerCN: String(peer?.subject?.CN ?? ''),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const vendor = fakeVendor();
const products: Product[] = [];
const licences: License[] = [];
let h: GatewayWithFakeServices;
let first: { cert: string; key: string };
let gateway: ChildProcess;
let url: string;

beforeAll(async () => {
  first = makeCert('licensing-first');
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  h = await startGatewayWithFakeServices({
    startGateway: false,
    handlers: {
      account: accountHandlers([vendor]),
      product: productHandlers(products),
      license: licenseHandlers(licences),
    },
  });
  const port = await freePort();
  const spawned = spawnComponent(
    'gateway',
    {
      ...h.env({ METRICS_PORT: '0', LOG_LEVEL: 'info', TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }),
      PORT: String(port),
    },
    join(dir, 'gateway.log'),
  );
  gateway = spawned.child;
  await Promise.race([waitForPort('127.0.0.1', port, 30_000), spawned.exited]);
  url = `https://127.0.0.1:${port}`;
}, 60_000);

afterAll(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((r) => gateway.once('exit', r));
    gateway.kill('SIGTERM');
    await exited;
  }
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('HTTPS in the gateway', () => {
  it('serves the happy path over TLS with HSTS: product, licence, validation', async () => {
    const { apiKey } = vendor;
    const product = await httpsCall(url, first.cert, 'POST', '/api/v1/products', apiKey, { name: 'Secure app' });
    expect(product.status).toBe(201);
    expect(product.peerCN).toBe('licensing-first');
    expect(product.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    const licence = await httpsCall(url, first.cert, 'POST', '/api/v1/licenses', apiKey, {
      product_id: product.body.id,
      customer_email: 'tls@example.com',
    });
    expect(licence.status).toBe(201);
    const verdict = await httpsCall(url, first.cert, 'POST', '/v1/keys/validate', apiKey, {
      key: licence.body.license_key,
    });
    expect(verdict.body).toMatchObject({ valid: true, code: 'valid' });
    expect(await servedExpiry()).toBe(expiryOf(first.cert));
  });

  it('refuses a client that does not trust the certificate (it is really TLS, not plain HTTP)', async () => {
    const other = makeCert('someone-else');
    await expect(httpsCall(url, other.cert, 'GET', '/healthz')).rejects.toThrow(
      /self[- ]signed|unable to verify|certificate/i,
    );
  });

  it('reloads the certificate and key on SIGHUP without a restart', async () => {
    const second = makeCert('licensing-second', 2); // a later expiry than the first: the metric follows
    writeFileSync(certFile, second.cert);
    writeFileSync(keyFile, second.key);
    expect((await httpsCall(url, first.cert, 'GET', '/healthz')).peerCN).toBe('licensing-first'); // until told
    gateway.kill('SIGHUP');
    await eventually(async () =>
      expect((await httpsCall(url, second.cert, 'GET', '/healthz')).peerCN).toBe('licensing-second'),
    );
    expect(new X509Certificate(second.cert).subject).toContain('licensing-second');
    expect(await servedExpiry()).toBe(expiryOf(second.cert));
  });

  it('keeps the previous certificate when the new files are broken', async () => {
    const current = readFileSync(certFile, 'utf8');
    writeFileSync(keyFile, 'not a key');
    gateway.kill('SIGHUP');
    await eventually(() =>
      expect(readFileSync(join(dir, 'gateway.log'), 'utf8')).toContain(
        'TLS certificate reload failed; still serving the previous one',
      ),
    );
    expect((await httpsCall(url, current, 'GET', '/healthz')).status).toBe(200);
    expect(await servedExpiry()).toBe(expiryOf(current)); // still the certificate served
    expect(gateway.exitCode).toBeNull();
  });
});

describe('production mode over plain HTTP', () => {
  it('refuses to start without TLS or a trusted proxy', async () => {
    await expect(h.extraGateway({ NODE_ENV: 'production', TLS_CERT_FILE: '', TLS_KEY_FILE: '' })).rejects.toThrow(
      /production needs HTTPS/,
    );
    await expect(
      startGateway({ env: { INTERNAL_TOKEN: 'x', NODE_ENV: 'development', TLS_CERT_FILE: certFile } }),
    ).rejects.toThrow(/TLS_CERT_FILE and TLS_KEY_FILE must be set together/);
  });

  it('names every bad transport setting at start: unreadable or mismatched TLS files, a proxy that is not an address', async () => {
    const env = { INTERNAL_TOKEN: 'x', NODE_ENV: 'production' };
    await expect(
      startGateway({ env: { ...env, TLS_CERT_FILE: join(dir, 'missing.crt'), TLS_KEY_FILE: keyFile } }),
    ).rejects.toThrow(/TLS_CERT_FILE\/TLS_KEY_FILE cannot be read \(ENOENT/);
    const other = makeCert('mismatch');
    writeFileSync(join(dir, 'other.key'), other.key);
    await expect(
      startGateway({ env: { ...env, TLS_CERT_FILE: certFile, TLS_KEY_FILE: join(dir, 'other.key') } }),
    ).rejects.toThrow(/do not hold a matching PEM certificate and key/);
    const bad = startGateway({ env: { ...env, TRUSTED_PROXIES: '10.0.0.0/8, proxy.example.com, 10.0.0.1/40' } });
    await expect(bad).rejects.toThrow(/"proxy\.example\.com" is not an address/);
    await expect(startGateway({ env: { ...env, TRUSTED_PROXIES: '10.0.0.1/40' } })).rejects.toThrow(
      /"10\.0\.0\.1\/40"/,
    );
    // Express's names for private ranges are accepted.
    const accepted = await startGateway({
      env: {
        ...env,
        TRUSTED_PROXIES: 'loopback,uniquelocal',
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: '0',
        NATS_URL: h.topology.natsUrl,
      },
    });
    await accepted.stop();
  });

  it('answers 426 to API traffic in clear text; probes still answer', async () => {
    const gw = await h.extraGateway({
      NODE_ENV: 'production',
      TLS_CERT_FILE: '',
      TLS_KEY_FILE: '',
      TRUSTED_PROXIES: '10.9.9.9',
    });
    const { apiKey } = vendor;
    const api = client(gw.url, apiKey);
    const refused = await api('GET', '/api/v1/products');
    expect(refused.status).toBe(426);
    expect(refused.headers.get('upgrade')).toMatch(/TLS/);
    expect(refused.body).toMatchObject({ code: 'https_required', status: 426 });
    // A header from an address that is not a configured proxy is not believed.
    expect((await api('GET', '/api/v1/products', undefined, { 'x-forwarded-proto': 'https' })).status).toBe(426);
    expect((await api('GET', '/healthz')).status).toBe(200);
    expect((await api('GET', '/readyz')).status).toBe(200);
  });

  it('serves requests a trusted proxy received over HTTPS, with HSTS', async () => {
    const gw = await h.extraGateway({
      NODE_ENV: 'production',
      TLS_CERT_FILE: '',
      TLS_KEY_FILE: '',
      TRUSTED_PROXIES: '127.0.0.1',
    });
    const { apiKey } = vendor;
    const api = client(gw.url, apiKey);
    const ok = await api('GET', '/api/v1/products', undefined, {
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.7',
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
    expect((await api('GET', '/api/v1/products', undefined, { 'x-forwarded-proto': 'http' })).status).toBe(426);
  });
});
