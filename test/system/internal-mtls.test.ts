import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client, startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';

// The whole system with mutual TLS between every component, using the internal
// CA and certificates deploy/make-secrets.sh makes: every hop works (gateway to
// each service, licence service to product, checkout to product).
// Own stack: every component here talks mutual TLS with certificates made for this file.
const secretsDir = mkdtempSync(join(tmpdir(), 'licensing-test-mtls-'));
let stack: Stack;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  execFileSync('sh', [join(__dirname, '../../deploy/make-secrets.sh')], {
    env: { ...process.env, SECRETS_DIR: secretsDir },
    stdio: 'ignore',
  });
  stack = await startStack({ grpcTlsDir: secretsDir });
  api = client(stack.url, (await stack.newAccount()).apiKey);
}, 60_000); // certificates, then a whole stack

afterAll(async () => {
  await stack?.stop();
  rmSync(secretsDir, { recursive: true, force: true });
});

it('serves the API over mTLS between the components', async () => {
  // The status probes open their own channels (a TLS handshake each, within a 1 s probe): poll until all answer.
  await eventually(
    async () => {
      const status = await api('GET', '/api/v1/status');
      const services = status.body.services as Record<string, { status: string }>;
      expect(Object.keys(services).sort()).toEqual([
        'account',
        'checkout',
        'license',
        'notification',
        'product',
        'webhook',
      ]);
      expect(Object.values(services).map((s) => s.status)).toEqual(Object.keys(services).map(() => 'ok'));
    },
    { timeoutMs: 15_000, intervalMs: 250 },
  );
  const product = await api('POST', '/api/v1/products', { name: 'Over mTLS', price: { amount: 900, currency: 'eur' } });
  expect(product.status).toBe(201);
  // Gateway → licence service → product service.
  const licence = await api('POST', '/api/v1/licenses', {
    product_id: product.body.id,
    customer_email: 'tls@example.com',
  });
  expect(licence.status).toBe(201);
  const file = await api('POST', `/api/v1/licenses/${licence.body.license_key}/file`, {});
  expect(file.status).toBe(201);
  expect((await api('POST', '/api/v1/keys/validate', { key: licence.body.license_key })).body).toMatchObject({
    valid: true,
  });
  // Gateway → checkout service → product service.
  const session = await api('POST', '/api/v1/checkout', {
    product_id: product.body.id,
    success_url: 'https://vendor.example/thanks',
  });
  expect(session.status).toBe(201);
});

it('every component exports when the certificate it shows the others expires (certificate="grpc")', async () => {
  for (const [name, url] of Object.entries(stack.metricsUrls)) {
    const text = await (await fetch(url)).text();
    const line = text.split('\n').find((l) => l.startsWith('licensing_tls_certificate_expiry_timestamp_seconds{'));
    const expires = Date.parse(new X509Certificate(readFileSync(join(secretsDir, `${name}.crt`))).validTo) / 1000;
    expect([name, line]).toEqual([name, expect.stringContaining('certificate="grpc"')]);
    expect([name, Number(line!.split(' ').pop())]).toEqual([name, expires]);
  }
});
