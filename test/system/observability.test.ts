import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { setLogDestination } from '@licensing/runtime';
import { client, startStack, type Stack } from '../support/stack';
import { WebClient } from '../support/web-client';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';
import { credentialOf } from '../../scripts/lib/topology';

// One end-to-end run at debug level with every log line of every component
// captured: the lines have fixed keys, the request id reaches the services'
// lines, and no secret of the run appears anywhere. Then /metrics of each part.
// Own stack: every component logs at debug level into this file's capture, and the auth-failure throttle is set
// to 2.

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let stack: Stack;
let receiver: WebhookReceiver;
const secrets: Record<string, string> = {};
const requestIds: string[] = [];
let accountId = '';

beforeAll(async () => {
  setLogDestination(sink);
  receiver = await WebhookReceiver.start();
  stack = await startStack({ logLevel: 'debug' }, { AUTH_FAILURES_PER_MINUTE: '2' });
  const acct = await stack.newAccount();
  accountId = acct.accountId;
  secrets.api_key = acct.apiKey;
  secrets.internal_token = stack.topology.internalToken;
  // Each caller's own gRPC token.
  for (const caller of ['gateway', 'license', 'checkout', 'operator'] as const)
    secrets[`internal_token_${caller}`] = credentialOf(stack.topology, caller).token;
  secrets.api_key_pepper = stack.topology.apiKeyPepper;
  const api = client(stack.url, acct.apiKey);

  const product = await api('POST', '/api/v1/products', { name: 'Observed' }, { 'x-request-id': 'obs-create-product' });
  requestIds.push('obs-create-product');
  const license = await api(
    'POST',
    '/api/v1/licenses',
    { product_id: product.body.id, customer_email: 'buyer@example.com' },
    { 'x-request-id': 'obs-create-license' },
  );
  requestIds.push('obs-create-license');
  secrets.license_key = license.body.license_key;
  // The query form puts the key in the URL: the access log must not keep it.
  expect(
    (
      await api(
        'GET',
        `/api/v1/licenses/validate?license_key=${encodeURIComponent(license.body.license_key)}`,
        undefined,
        { 'x-request-id': 'obs-validate' },
      )
    ).body.code,
  ).toBe('valid');
  expect((await api('POST', '/api/v1/keys/validate', { key: 'not!a!key' })).body.valid).toBe(false);

  // Every /licenses/{key} route, on success and on error paths, with the key in the path (also lower-case,
  // through /v1, with broken encoding after it): the logs name the route template, never the key.
  const key = license.body.license_key as string;
  const lower = key.toLowerCase();
  secrets.license_key_lower = lower;
  const other = await api('POST', '/api/v1/licenses', {
    product_id: product.body.id,
    customer_email: 'other@example.com',
  });
  secrets.other_license_key = other.body.license_key;
  const activation = await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'machine-1' });
  expect(activation.status).toBe(201);
  const calls: [string, string, unknown?][] = [
    ['GET', `/api/v1/licenses/${key}`],
    ['GET', `/v1/licenses/${lower}`],
    ['PATCH', `/api/v1/licenses/${key}`, { metadata: { seat: '1' } }],
    ['PATCH', `/api/v1/licenses/${key}`, { nope: 1 }],
    ['POST', `/api/v1/licenses/${key}/suspend`],
    ['POST', `/api/v1/licenses/${key}/suspend`],
    ['POST', `/api/v1/licenses/${key}/reinstate`],
    ['POST', `/api/v1/licenses/${key}/renew`],
    ['GET', `/api/v1/licenses/${key}/activations`],
    ['GET', `/api/v1/licenses/${key}/activations?limit=0`],
    ['POST', `/api/v1/licenses/${key}/file`, {}],
    ['DELETE', `/api/v1/licenses/${key}/activations/${activation.body.id}`],
    ['DELETE', `/api/v1/licenses/${key}/activations/act_nope`],
    ['POST', `/api/v1/licenses/${other.body.license_key}/revoke`],
    ['POST', `/api/v1/licenses/${other.body.license_key}/reinstate`],
    ['PUT', `/api/v1/licenses/${key}`],
    ['GET', `/api/v1/licenses/${key}/nothing-here`],
    ['GET', `/api/v1/licenses/${key}%ED%A0%80/activations`],
    ['GET', `/api/v1/licenses/validate?license_key=${key}&unknown=1`],
  ];
  for (const [method, path, body] of calls) {
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${acct.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    expect(res.status).toBeLessThan(500);
  }

  const hook = await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/observed`, events: ['*'] });
  secrets.webhook_secret = hook.body.secret;
  await api('POST', `/api/v1/webhooks/${hook.body.id}/test`);
  await receiver.waitFor('/observed', 1);

  // Bad keys: two 401s, then the address is throttled (429, window auth_failures).
  const forged = `lk_full_${randomBytes(20).toString('hex')}`;
  secrets.forged_key = forged;
  for (let i = 0; i < 3; i++) await client(stack.url, forged)('GET', `/api/v1/licenses/${key}`); // with a licence key in the path

  const web = new WebClient(stack.url, stack.topology);
  const password = `pw-${randomBytes(8).toString('hex')}`;
  secrets.password = password;
  await web.signUp(`owner-${randomBytes(3).toString('hex')}@example.com`, password);
  await web.get(`/dashboard/licenses?q=${encodeURIComponent(license.body.license_key)}`);
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
  setLogDestination(undefined);
});

describe('logs', () => {
  it('are JSON lines with fixed keys from every component', () => {
    expect(lines.length).toBeGreaterThan(20);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const p of parsed) {
      expect(typeof p.level).toBe('number');
      expect(typeof p.time).toBe('string');
      expect(typeof p.service).toBe('string');
      expect(typeof p.msg).toBe('string');
    }
    const services = new Set(parsed.map((p) => p.service));
    for (const s of [
      'gateway',
      'account-service',
      'product-service',
      'license-service',
      'checkout-service',
      'webhook-service',
    ])
      expect(services).toContain(s);
  });

  it('carry the request id from the gateway into the service that did the work', () => {
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const of = (id: string) => [...new Set(parsed.filter((p) => p.request_id === id).map((p) => p.service))];
    // (The first request also authenticated the key at the account service.)
    expect(of('obs-create-product')).toEqual(expect.arrayContaining(['gateway', 'product-service']));
    // The licence service asked the product service for the policy: both have the id.
    expect(of('obs-create-license')).toEqual(expect.arrayContaining(['gateway', 'license-service', 'product-service']));
    expect(of('obs-validate')).toEqual(expect.arrayContaining(['gateway', 'license-service']));
    expect(of('obs-validate')).not.toContain('checkout-service');
  });

  it("the gateway's access line names the route, status, duration and the caller's account and key", () => {
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const access = parsed.find(
      (p) => p.service === 'gateway' && p.msg === 'request' && p.request_id === 'obs-validate',
    );
    expect(access).toMatchObject({
      level: 30,
      method: 'GET',
      url: '/api/v1/licenses/validate?license_key=[redacted]',
      status: 200,
      account_id: accountId,
      key_id: expect.stringMatching(/^key_/),
      ms: expect.any(Number),
    });
  });

  it('never contain a secret: API keys, bearer tokens, licence keys in URLs, passwords, webhook secrets', () => {
    const all = lines.join('\n');
    expect(Object.keys(secrets)).toEqual(
      expect.arrayContaining(['api_key', 'license_key', 'webhook_secret', 'password', 'forged_key', 'internal_token']),
    );
    for (const [name, value] of Object.entries(secrets)) {
      expect(value.length).toBeGreaterThan(8);
      if (all.includes(value))
        throw new Error(`the ${name} appears in the logs:\n${lines.find((l) => l.includes(value))}`);
    }
    expect(all).not.toMatch(/Bearer\s+lk_/);
    expect(all).toContain('[redacted]'); // the validate URL was logged, without its key
    // The access log names each /licenses/{key} route by its template.
    expect(all).toContain('/api/v1/licenses/:key/activations/:id');
    expect(all).toContain('/api/v1/licenses/:key/suspend');
  });
});

describe('metrics', () => {
  const scrape = async (url: string) => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };
  const value = (text: string, series: RegExp) => {
    const line = text.split('\n').find((l) => series.test(l));
    return line ? Number(line.split(' ').pop()) : undefined;
  };

  it('the gateway counts requests by route template and status, and 429s by window', async () => {
    const text = await scrape(stack.metricsUrls.gateway);
    expect(
      value(text, /^licensing_http_requests_total\{.*method="POST".*route="\/api\/v1\/products".*status="201"/),
    ).toBeGreaterThanOrEqual(1);
    expect(value(text, /^licensing_http_requests_total\{.*route="\/api\/v1\/licenses\/validate".*status="200"/)).toBe(
      1,
    );
    expect(text).not.toMatch(/route="[^"]*(prod_|lic_|[A-Z0-9]{5}-)/); // templates, never raw ids or keys
    expect(value(text, /^licensing_http_request_duration_seconds_count\{.*route="\/api\/v1\/keys\/validate"/)).toBe(1);
    expect(value(text, /^licensing_rate_limit_rejections_total\{.*window="auth_failures"/)).toBe(1);
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('the licence service counts gRPC calls by method and code, and validations by code; the gateway those it answered itself', async () => {
    const text = await scrape(stack.metricsUrls.license);
    // The malformed key never left the gateway: only the real key reached the service (a cache miss).
    expect(value(text, /^licensing_grpc_server_handled_total\{.*method="ValidateLicense".*code="OK"/)).toBe(1);
    expect(value(text, /^licensing_validations_total\{.*code="valid"/)).toBe(1);
    const gateway = await scrape(stack.metricsUrls.gateway);
    expect(value(gateway, /^licensing_validations_total\{.*code="not_found"/)).toBe(1);
    expect(value(gateway, /^licensing_validation_cache_total\{.*result="miss"/)).toBe(1);
    expect(value(text, /^licensing_events_published_total\{.*type="license.created"/)).toBe(2);
    expect(value(text, /^licensing_outbox_backlog\{/)).toBeGreaterThanOrEqual(0);
    expect(value(text, /^licensing_outbox_oldest_age_seconds\{/)).toBeGreaterThanOrEqual(0);
  });

  it('what the shipped alerts read: NATS connected, rate limits in Redis, deliveries queued; no certificate without TLS', async () => {
    // The gateway connects to NATS in the background.
    await eventually(async () =>
      expect(value(await scrape(stack.metricsUrls.gateway), /^licensing_nats_connected\{/)).toBe(1),
    );
    const gateway = await scrape(stack.metricsUrls.gateway);
    expect(value(gateway, /^licensing_rate_limit_fallback\{/)).toBe(0);
    expect(gateway).not.toContain('licensing_tls_certificate_expiry_timestamp_seconds{');
    expect(value(await scrape(stack.metricsUrls.license), /^licensing_nats_connected\{/)).toBe(1);
    expect(value(await scrape(stack.metricsUrls.webhook), /^licensing_webhook_queued\{/)).toBeGreaterThanOrEqual(0);
  });

  it('the webhook service counts deliveries by outcome; the product service its events', async () => {
    expect(
      value(await scrape(stack.metricsUrls.webhook), /^licensing_webhook_deliveries_total\{.*outcome="delivered"/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(await scrape(stack.metricsUrls.product), /^licensing_events_published_total\{.*type="product.created"/),
    ).toBe(1);
  });

  it('answers only GET /metrics on the metrics port, and /metrics is not on the public port', async () => {
    expect((await fetch(stack.metricsUrls.account.replace('/metrics', '/other'))).status).toBe(404);
    const pub = await client(stack.url)('GET', '/metrics');
    expect(pub.status).toBe(404);
  });
});
