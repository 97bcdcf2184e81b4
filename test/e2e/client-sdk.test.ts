import { LicensingClient, LicensingError, verifyLicenseFile, verifyWebhook, type License } from '@licensing/client';
import { startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';
import { sdk } from '../support/sdk';
import { WebhookReceiver } from '../support/webhook-receiver';

// Own stack: it stops the licence service to see how the SDK reports an outage.

// @licensing/client against a whole running system: every call here goes
// through the SDK (its answers checked against the OpenAPI document).

let stack: Stack;
let receiver: WebhookReceiver;
let client: LicensingClient;
let accountId: string;
let productId: string;

beforeAll(async () => {
  stack = await startStack();
  receiver = await WebhookReceiver.start();
  const acct = await stack.newAccount();
  accountId = acct.accountId;
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000 });
  client = sdk(stack.url, acct.apiKey);
  productId = (
    await client.products.create({ name: 'SDK Photo Editor', policy: { duration_days: 365, max_activations: 2 } })
  ).id;
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

const issue = (email = 'ada@example.com', product = productId) =>
  client.licenses.create({ product_id: product, customer_email: email });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a LicensingError');
    },
    (e: unknown) => e as LicensingError,
  );

describe('products and licences', () => {
  it('creates, reads, updates and lists products', async () => {
    const created = await client.products.create({ name: 'Scratch', description: 'to change' });
    expect(created).toMatchObject({ id: expect.stringMatching(/^prod_/), name: 'Scratch', price: null });
    await expect(client.products.get(created.id)).resolves.toEqual(created);
    const updated = await client.products.update(created.id, {
      name: 'Renamed',
      price: { amount: 4900, currency: 'EUR' },
    });
    expect(updated).toMatchObject({ name: 'Renamed', price: { amount: 4900 } });
    const first = await client.products.list({ limit: 1 }).page();
    expect(first).toEqual({ data: [updated], has_more: true, next_cursor: updated.id });
  });

  it('issues a licence (the REST body), validates it, and answers every state change', async () => {
    const created = await issue();
    expect(created).toEqual({
      success: true,
      license_key: created.license.key,
      license: expect.objectContaining({ product_id: productId, status: 'active' }),
    });
    const key = created.license_key;
    const verdict = await client.licenses.validate(key, { productId });
    expect(verdict).toMatchObject({
      valid: true,
      code: 'valid',
      cache_until: expect.any(String),
      license: expect.objectContaining({ key }),
    });
    await expect(
      client.licenses.validate(key, { productId: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P' }),
    ).resolves.toMatchObject({ valid: false, code: 'product_mismatch' });
    await expect(client.licenses.validate(` ${key.toLowerCase()} `)).resolves.toMatchObject({ valid: true });
    await expect(client.licenses.get(key)).resolves.toMatchObject({ key, activations: 0 });

    await expect(client.licenses.suspend(key)).resolves.toMatchObject({ status: 'suspended' });
    await expect(client.licenses.validate(key)).resolves.toMatchObject({ valid: false, code: 'suspended' });
    await expect(client.licenses.reinstate(key)).resolves.toMatchObject({ status: 'active' });
    const renewed = await client.licenses.renew(key);
    expect(Date.parse(renewed.expires_at!)).toBeGreaterThan(Date.parse(created.license.expires_at!));
    await expect(client.licenses.revoke(key)).resolves.toMatchObject({ status: 'revoked' });
    await expect(client.licenses.validate(key)).resolves.toMatchObject({ valid: false, code: 'revoked' });
  });

  it('activates and deactivates machines', async () => {
    const { license_key: key } = await issue();
    const activation = await client.licenses.activate(key, { fingerprint: 'box-1', name: 'Studio' });
    expect(activation).toMatchObject({ id: expect.stringMatching(/^act_/), fingerprint: 'box-1' });
    await expect(client.licenses.activate(key, { fingerprint: 'box-1' })).resolves.toMatchObject({ id: activation.id });
    await expect(client.licenses.activations(key).toArray()).resolves.toEqual([activation]);
    await client.licenses.deactivate(key, activation.id);
    await expect(client.licenses.activations(key).toArray()).resolves.toEqual([]);
  });

  it('an Idempotency-Key returns the first licence again, and 422 with another body', async () => {
    const first = await client.licenses.create(
      { product_id: productId, customer_email: 'once@example.com' },
      { idempotencyKey: 'order-7781' },
    );
    const again = await client.licenses.create(
      { product_id: productId, customer_email: 'once@example.com' },
      { idempotencyKey: 'order-7781' },
    );
    expect(again.license_key).toBe(first.license_key);
    const err = await failure(
      client.licenses.create(
        { product_id: productId, customer_email: 'twice@example.com' },
        { idempotencyKey: 'order-7781' },
      ),
    );
    expect(err).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });

  it('issues a batch (licenses.batch, batchStatus) and rerolls a key (licenses.reroll)', async () => {
    const job = await client.licenses.batch(
      { product_id: productId, licenses: [{ customer_email: 'b1@example.com' }, { customer_email: 'b2@example.com' }] },
      { idempotencyKey: 'batch-1' },
    );
    expect(job).toMatchObject({ object: 'license_batch', total: 2 });
    const done = await eventually(async () => {
      const now = await client.licenses.batchStatus(job.id);
      expect(now).toMatchObject({ status: 'done', issued: 2 });
      return now;
    });
    const oldKey = done.results[0].license_key!;
    const rerolled = await client.licenses.reroll(oldKey, { grace_hours: 1 });
    expect(rerolled.key).not.toBe(oldKey);
    await expect(client.licenses.validate(oldKey)).resolves.toMatchObject({ valid: true, next_action: 'update_key' });
    const bad = await failure(client.licenses.reroll(rerolled.key, { grace_hours: 9999 }));
    expect(bad).toMatchObject({ status: 400 });
  });
});

describe('pagination', () => {
  it('for await walks every page itself; .page() answers one', async () => {
    const product = (await client.products.create({ name: 'Paged' })).id;
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push((await issue(`p${i}@example.com`, product)).license_key);
    const seen: License[] = [];
    for await (const l of client.licenses.list({ limit: 2, product_id: product })) seen.push(l);
    expect(seen.map((l) => l.key)).toEqual([...keys].reverse());
    const page = await client.licenses.list({ limit: 2, product_id: product }).page();
    expect(page).toMatchObject({ has_more: true, next_cursor: page.data[1].id });
    expect(page.data.map((l) => l.key)).toEqual([keys[4], keys[3]]);
    const last = await client.licenses.list({ limit: 2, product_id: product }).page(seen[3].id);
    expect(last).toEqual({ data: [seen[4]], has_more: false, next_cursor: null });
  });
});

describe('errors', () => {
  it('400 carries the field errors, 404 the code, 409 a refused state change, all with the request id', async () => {
    const bad = await failure(client.licenses.create({ product_id: productId, customer_email: 'not-an-email' }));
    expect(bad).toBeInstanceOf(LicensingError);
    expect(bad).toMatchObject({
      status: 400,
      code: 'invalid_request',
      requestId: expect.any(String),
      errors: [{ field: 'customer_email', message: expect.any(String) }],
    });
    const missing = await failure(client.products.get('prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P'));
    expect(missing).toMatchObject({ status: 404, code: 'not_found', type: '/docs#error-not_found', errors: [] });
    const { license_key: key } = await issue();
    await client.licenses.revoke(key);
    await expect(failure(client.licenses.revoke(key))).resolves.toMatchObject({ status: 409, code: 'conflict' });
  });

  it('401 for an unknown key, 403 for a validate key outside validation, 404 for another account', async () => {
    await expect(failure(sdk(stack.url, 'lk_full_nope').status())).resolves.toMatchObject({
      status: 401,
      code: 'unauthorized',
    });
    const { secret } = await stack.admin.createApiKey({ account_id: accountId, scope: 'validate', name: 'in-app' });
    const inApp = sdk(stack.url, secret);
    const { license_key: key } = await issue();
    await expect(inApp.licenses.validate(key)).resolves.toMatchObject({ valid: true });
    await expect(inApp.status()).resolves.toMatchObject({ status: expect.any(String) });
    await expect(failure(inApp.products.create({ name: 'Nope' }))).resolves.toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    const other = sdk(stack.url, (await stack.newAccount()).apiKey);
    await expect(failure(other.licenses.get(key))).resolves.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('429 with Retry-After when a limit runs out; the SDK does not wait longer than it may', async () => {
    const acct = await stack.newAccount();
    await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 2 });
    const limited = sdk(stack.url, acct.apiKey, { maxRetryDelayMs: 0 });
    await limited.status();
    await limited.status();
    const err = await failure(limited.status());
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', retryAfterS: expect.any(Number) });
    expect(err.retryAfterS).toBeGreaterThan(0);
  });

  it('a network failure is status 0, code network_error', async () => {
    const nowhere = new LicensingClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'lk_full_x', maxRetries: 0 });
    await expect(failure(nowhere.status())).resolves.toMatchObject({ status: 0, code: 'network_error' });
  });
});

describe('licence files', () => {
  it("a file verifies offline with the product's signing keys; a changed one does not", async () => {
    const { license_key: key } = await issue('offline@example.com');
    const file = await client.licenses.file(key, { ttlDays: 7 });
    const publicKeys = await client.products.signingKeys(productId);
    expect(publicKeys).toEqual([expect.objectContaining({ kid: file.kid, current: true })]);
    const verified = await verifyLicenseFile(file, { publicKeys });
    expect(verified).toEqual({
      valid: true,
      license: expect.objectContaining({
        license_key: key,
        product_id: productId,
        customer_email: 'offline@example.com',
        kid: file.kid,
      }),
    });
    const validUntil = Date.parse(verified.license!.valid_until);
    await expect(verifyLicenseFile(file, { publicKeys, now: validUntil + 1 })).resolves.toMatchObject({
      valid: false,
      reason: 'expired',
    });
    const forged = JSON.parse(atob(file.payload.replace(/-/g, '+').replace(/_/g, '/')));
    const tampered = {
      ...file,
      payload: btoa(JSON.stringify({ ...forged, valid_until: '2099-01-01T00:00:00.000Z' })).replace(/=+$/, ''),
    };
    await expect(verifyLicenseFile(tampered, { publicKeys })).resolves.toMatchObject({
      valid: false,
      reason: 'bad_signature',
    });
    const otherProduct = (await client.products.create({ name: 'Other keys' })).id;
    await client.licenses.file((await issue('x@example.com', otherProduct)).license_key);
    await expect(
      verifyLicenseFile(file, { publicKeys: await client.products.signingKeys(otherProduct) }),
    ).resolves.toMatchObject({ valid: false, reason: 'unknown_key' });
  });
});

describe('webhooks', () => {
  it("a delivery verifies with verifyWebhook and the endpoint's secret, and fails with another", async () => {
    const endpoint = await client.webhooks.create({ url: `${receiver.url}/sdk`, events: ['license.created'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const { license_key: key } = await issue('hooked@example.com');
    const [req] = await receiver.waitFor('/sdk', 1);
    const result = await verifyWebhook(req.body, req.headers, endpoint.secret);
    expect(result).toEqual({
      valid: true,
      event: expect.objectContaining({ type: 'license.created', data: { license: expect.objectContaining({ key }) } }),
    });
    const rotated = await client.webhooks.rotateSecret(endpoint.id);
    await expect(verifyWebhook(req.body, req.headers, rotated.secret)).resolves.toMatchObject({
      valid: false,
      reason: 'bad_signature',
    });
    await expect(
      verifyWebhook(req.body.replace('hooked@', 'forged@'), req.headers, endpoint.secret),
    ).resolves.toMatchObject({ valid: false, reason: 'bad_signature' });
  });

  it('manages endpoints: get, list, update, test, deliveries, retry, delete', async () => {
    receiver.answer('/manage', 500); // a failing receiver, so the delivery can be retried by hand
    const endpoint = await client.webhooks.create({ url: `${receiver.url}/manage`, events: ['product.created'] });
    const { secret: _secret, ...shown } = endpoint;
    await expect(client.webhooks.get(endpoint.id)).resolves.toEqual(shown);
    const all = await client.webhooks.list().toArray();
    expect(all.map((e) => e.id)).toContain(endpoint.id);
    await expect(client.webhooks.update(endpoint.id, { description: 'ops' })).resolves.toMatchObject({
      description: 'ops',
    });
    const queued = await client.webhooks.test(endpoint.id);
    expect(queued).toMatchObject({ event_type: 'webhook.test' });
    await receiver.waitFor('/manage', 1);
    const deliveries = await client.webhooks.deliveries(endpoint.id).toArray();
    expect(deliveries.map((d) => d.id)).toContain(queued.id);
    await expect(client.webhooks.retry(endpoint.id, queued.id)).resolves.toMatchObject({
      id: queued.id,
      status: 'pending',
    });
    await receiver.waitFor('/manage', 2);
    await client.webhooks.delete(endpoint.id);
    await expect(failure(client.webhooks.get(endpoint.id))).resolves.toMatchObject({ status: 404 });
  });
});

describe('checkout and status', () => {
  it('creates, gets and lists checkout sessions, idempotently', async () => {
    const priced = (await client.products.create({ name: 'For sale', price: { amount: 1900, currency: 'EUR' } })).id;
    const body = { product_id: priced, success_url: 'http://127.0.0.1/thanks' };
    const session = await client.checkout.create(body, { idempotencyKey: 'cart-1' });
    expect(session).toMatchObject({
      id: expect.stringMatching(/^cs_/),
      status: 'open',
      amount: 1900,
      url: expect.any(String),
    });
    await expect(client.checkout.create(body, { idempotencyKey: 'cart-1' })).resolves.toEqual(session);
    await expect(client.checkout.get(session.id)).resolves.toEqual(session);
    const listed = await client.checkout.list().toArray();
    expect(listed.map((s) => s.id)).toEqual([session.id]);
    await expect(client.checkout.expire(session.id)).resolves.toMatchObject({ status: 'expired' });
  });

  it('status answers every service', async () => {
    const status = await client.status();
    expect(status).toMatchObject({ status: 'ok', services: { license: { status: 'ok' } } });
  });

  // Last: it stops a service of this stack.
  it('503 when a service is down: the SDK honours Retry-After, retries, then throws', async () => {
    await stack.stopService('license');
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const patient = new LicensingClient({
      baseUrl: stack.url,
      apiKey: (await stack.newAccount()).apiKey,
      fetch: counting,
      maxRetries: 1,
    });
    const err = await failure(patient.licenses.list().page());
    expect(err).toMatchObject({ status: 503, code: 'service_unavailable', retryAfterS: 5 });
    expect(calls).toBe(2);
  });
});
