import { client, startStack, TestClock, type Stack } from '../support/stack';
import { EventLog } from '../support/events';

const DAY = 86_400_000;
const clock = new TestClock();
let stack: Stack;
let events: EventLog;
let accountId: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  stack = await startStack({}, {}, clock);
  const acct = await stack.newAccount();
  accountId = acct.accountId;
  // One key makes every request of this file: lift its per-minute limit.
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
});

async function product(policy?: Record<string, unknown>) {
  const res = await api('POST', '/api/v1/products', { name: 'Policy product', ...(policy ? { policy } : {}) });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/**
 * Waits for a sweeper pass that started after now: a licence that only a sweep
 * can expire (nobody reads it) is made, its expiry passes, and its
 * license.expired arrives. No fixed sleep.
 */
async function aSweepHasPassed(): Promise<void> {
  const sentinel = await license(await product({ duration_days: 1 }), 'sentinel@example.com');
  clock.advance(2 * DAY);
  await events.waitFor(
    (e) => e.type === 'license.expired' && (e.data as { license: { key: string } }).license.key === sentinel,
  );
}

async function license(productId: string, email = 'buyer@example.com') {
  const res = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: email });
  expect(res.status).toBe(201);
  return res.body.license_key as string;
}

const validate = (key: string, extra: Record<string, string> = {}) =>
  api('POST', '/api/v1/keys/validate', { key, ...extra });

describe('licence policy on the product', () => {
  it('is set at creation, shown, and editable; licences keep the policy they were issued under', async () => {
    const id = await product({ duration_days: 30, max_activations: 3, grace_days: 7, require_activation: true });
    const read = await api('GET', `/api/v1/products/${id}`);
    expect(read.body.policy).toEqual({
      duration_days: 30,
      max_activations: 3,
      grace_days: 7,
      require_activation: true,
      validate_keys_see_email: false,
      refund_action: 'revoke',
      lease_seconds: null,
      entitlements: [],
      customer_deactivations_per_30_days: 3,
      payment_grace_days: 7,
      max_file_ttl_days: 30,
    });
    const key = await license(id);
    const patched = await api('PATCH', `/api/v1/products/${id}`, { policy: { duration_days: 365 } });
    expect(patched.status).toBe(200);
    expect(patched.body.policy).toEqual({
      duration_days: 365,
      max_activations: null,
      grace_days: 0,
      require_activation: false,
      validate_keys_see_email: false,
      refund_action: 'revoke',
      lease_seconds: null,
      entitlements: [],
      customer_deactivations_per_30_days: 3,
      payment_grace_days: 7,
      max_file_ttl_days: 30,
    });
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.policy.duration_days).toBe(30);
    await events.waitFor(
      (e) => e.type === 'product.updated' && (e.data as { product: { id: string } }).product.id === id,
    );
    expect(
      (await api('GET', '/api/v1/products')).body.data.find((p: { id: string }) => p.id === id).policy.duration_days,
    ).toBe(365);
  });

  it('a licence issued as soon as its product policy changed has the new policy (the issuing cache forgets at once)', async () => {
    const id = await product({ duration_days: 30 });
    await license(id); // the licence service now remembers the product
    for (const days of [365, 90, 7, 400]) {
      expect((await api('PATCH', `/api/v1/products/${id}`, { policy: { duration_days: days } })).status).toBe(200);
      const key = await license(id);
      expect((await api('GET', `/api/v1/licenses/${key}`)).body.policy.duration_days).toBe(days);
    }
  });

  it.each([
    [{ duration_days: 0 }, 'policy.duration_days'],
    [{ duration_days: -5 }, 'policy.duration_days'],
    [{ duration_days: 1.5 }, 'policy.duration_days'],
    [{ duration_days: '30' }, 'policy.duration_days'],
    [{ max_activations: 0 }, 'policy.max_activations'],
    [{ grace_days: 3 }, 'policy.grace_days'],
    [{ require_activation: 'yes' }, 'policy.require_activation'],
    [{ seats: 3 }, 'policy.seats'],
  ])('refuses policy %p (400, field %s)', async (policy, field) => {
    const res = await api('POST', '/api/v1/products', { name: 'Bad', policy });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });
});

describe('states and transitions', () => {
  it('suspend, reinstate, revoke: each changes validation and publishes its event', async () => {
    const key = await license(await product());
    const suspended = await api('POST', `/api/v1/licenses/${key}/suspend`);
    expect(suspended.body.status).toBe('suspended');
    expect((await validate(key)).body).toMatchObject({
      valid: false,
      code: 'suspended',
      next_action: 'contact_vendor',
      status: 'suspended',
    });
    expect((await api('POST', `/api/v1/licenses/${key}/reinstate`)).body.status).toBe('active');
    expect((await validate(key)).body).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
    expect((await api('POST', `/api/v1/licenses/${key}/revoke`)).body.status).toBe('revoked');
    expect((await validate(key)).body).toMatchObject({ valid: false, code: 'revoked' });
    for (const type of ['license.suspended', 'license.reinstated', 'license.revoked']) {
      await events.waitFor((e) => e.type === type && (e.data as { license: { key: string } }).license.key === key);
    }
  });

  it('a transition that is not allowed is 409 conflict with a clear detail, and changes nothing', async () => {
    const key = await license(await product());
    await api('POST', `/api/v1/licenses/${key}/revoke`);
    const res = await api('POST', `/api/v1/licenses/${key}/reinstate`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'conflict',
      detail: 'a revoked licence cannot be reinstated: revocation is final',
    });
    expect((await api('POST', `/api/v1/licenses/${key}/suspend`)).status).toBe(409);
    expect((await api('POST', `/api/v1/licenses/${key}/renew`)).status).toBe(409);
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.status).toBe('revoked');
    const fresh = await license(await product());
    expect((await api('POST', `/api/v1/licenses/${fresh}/reinstate`)).body.detail).toBe('the licence is not suspended');
    expect((await api('POST', `/api/v1/licenses/${fresh}/renew`)).body.detail).toMatch(/perpetual/);
    expect((await api('POST', `/api/v1/licenses/${fresh}/suspend`, { reason: 'x' })).status).toBe(400);
  });

  it('expiry and grace follow the clock; license.expired is published once; renew brings it back', async () => {
    const id = await product({ duration_days: 30, grace_days: 5 });
    const key = await license(id);
    const created = (await api('GET', `/api/v1/licenses/${key}`)).body;
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(30 * DAY);
    clock.advance(31 * DAY);
    expect((await validate(key)).body).toMatchObject({
      valid: true,
      code: 'expired_in_grace',
      next_action: 'renew',
      status: 'active',
    });
    clock.advance(5 * DAY);
    expect((await validate(key)).body).toMatchObject({
      valid: false,
      code: 'expired',
      next_action: 'renew',
      status: 'expired',
    });
    expect(
      (await api('GET', `/api/v1/licenses?status=expired`)).body.data.map((l: { key: string }) => l.key),
    ).toContain(key);
    const expired = await events.waitFor(
      (e) => e.type === 'license.expired' && (e.data as { license: { key: string } }).license.key === key,
    );
    await aSweepHasPassed(); // which would have published it again
    expect(
      events
        .all()
        .filter((e) => e.type === 'license.expired' && (e.data as { license: { key: string } }).license.key === key),
    ).toEqual([expired]);
    const renewed = await api('POST', `/api/v1/licenses/${key}/renew`);
    expect(renewed.body.status).toBe('active');
    expect(Date.parse(renewed.body.expires_at)).toBeGreaterThan(clock.now().getTime() + 29 * DAY);
    expect((await validate(key)).body.code).toBe('valid');
    await events.waitFor(
      (e) => e.type === 'license.renewed' && (e.data as { license: { key: string } }).license.key === key,
    );
  });

  it('with two licence-service instances sweeping, each licence gets exactly one license.expired', async () => {
    await stack.extraService('license');
    const id = await product({ duration_days: 1 });
    const keys = [await license(id), await license(id), await license(id)];
    clock.advance(2 * DAY);
    for (const key of keys)
      await events.waitFor(
        (e) => e.type === 'license.expired' && (e.data as { license: { key: string } }).license.key === key,
      );
    for (let i = 0; i < 3; i++) await aSweepHasPassed(); // several passes, by either instance
    for (const key of keys) {
      expect(
        events
          .all()
          .filter((e) => e.type === 'license.expired' && (e.data as { license: { key: string } }).license.key === key),
      ).toHaveLength(1);
    }
  });

  it('PATCH changes the customer e-mail and metadata; bad input is 400', async () => {
    const key = await license(await product());
    const res = await api('PATCH', `/api/v1/licenses/${key}`, {
      customer_email: 'new@example.com',
      metadata: { order: 'A-1', seats: '3' },
    });
    expect(res.body).toMatchObject({ customer_email: 'new@example.com', metadata: { order: 'A-1', seats: '3' } });
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { seats: '' } })).body.metadata).toEqual({
      order: 'A-1',
    });
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { customer_email: 'nope' })).status).toBe(400);
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { n: 5 } })).status).toBe(400);
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { 'bad key!': 'x' } })).status).toBe(400);
    // A dotted key would be a path in the stored document (FerretDB refuses the write): 400 naming it, never 500.
    for (const bad of ['a.b', '$set', '.']) {
      const refused = await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { [bad]: 'x' } });
      expect([refused.status, refused.body.errors]).toEqual([
        400,
        [{ field: `metadata.${bad}`, message: expect.stringContaining('no "." or "$"') }],
      ]);
    }
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.metadata).toEqual({ order: 'A-1' });
    expect((await api('PATCH', `/api/v1/licenses/${key}`, {})).status).toBe(400);
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { status: 'revoked' })).status).toBe(400);
    await events.waitFor(
      (e) => e.type === 'license.updated' && (e.data as { license: { key: string } }).license.key === key,
    );
  });
});

describe('activations', () => {
  it('20 parallel activations with distinct fingerprints against a limit of 5 yield exactly 5', async () => {
    const key = await license(await product({ max_activations: 5, require_activation: true }));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: `machine-${i}` }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.status === 409)).toHaveLength(15);
    expect(results.find((r) => r.status === 409)!.body).toMatchObject({
      detail: expect.stringMatching(/activation_limit_reached/),
      next_action: 'free_a_seat',
    });
    expect((await api('GET', `/api/v1/licenses/${key}/activations`)).body.data).toHaveLength(5);
    // Every seat taken: the user frees one (the customer portal; POST …/seat-rescue mails the link).
    expect((await validate(key, { fingerprint: 'machine-outsider' })).body).toMatchObject({
      valid: false,
      code: 'activation_limit_reached',
      next_action: 'free_a_seat',
    });
  });

  it('re-activating a fingerprint returns the same activation (200); deactivating frees a slot', async () => {
    const key = await license(await product({ max_activations: 1, require_activation: true }));
    expect((await validate(key)).body).toMatchObject({ code: 'not_activated', next_action: 'activate' });
    const first = await api('POST', `/api/v1/licenses/${key}/activations`, {
      fingerprint: 'laptop',
      name: 'Ada’s laptop',
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^act_/),
      fingerprint: 'laptop',
      name: 'Ada’s laptop',
      created_at: expect.any(String),
      lease_expires_at: null,
    });
    const again = await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'laptop' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect((await validate(key, { fingerprint: 'laptop' })).body).toMatchObject({ valid: true, code: 'valid' });
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=laptop`)).body.code).toBe(
      'valid',
    );
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'desktop' })).status).toBe(409);
    expect((await api('DELETE', `/api/v1/licenses/${key}/activations/${first.body.id}`)).status).toBe(204);
    expect((await api('DELETE', `/api/v1/licenses/${key}/activations/${first.body.id}`)).status).toBe(404);
    expect((await validate(key, { fingerprint: 'laptop' })).body.code).toBe('not_activated');
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'desktop' })).status).toBe(201);
    await events.waitFor(
      (e) => e.type === 'license.activated' && (e.data as { license: { key: string } }).license.key === key,
    );
    await events.waitFor(
      (e) =>
        e.type === 'license.deactivated' &&
        (e.data as { activation: { fingerprint: string } }).activation.fingerprint === 'laptop',
    );
  });

  it('refuses bad activation input and activating a suspended licence', async () => {
    const key = await license(await product());
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, {})).status).toBe(400);
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'x'.repeat(201) })).status).toBe(
      400,
    );
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'ok', extra: 1 })).status).toBe(
      400,
    );
    await api('POST', `/api/v1/licenses/${key}/suspend`);
    const res = await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'ok' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('the licence is suspended: it cannot be activated');
  });
});

describe('who sees what', () => {
  it('a validate key sees customer_email only when the product allows it', async () => {
    const hidden = await license(await product(), 'private@example.com');
    const shown = await license(await product({ validate_keys_see_email: true }), 'shared@example.com');
    const app = client(
      stack.url,
      (await stack.admin.createApiKey({ account_id: accountId, scope: 'validate', name: 'app' })).secret,
    );
    expect((await app('POST', '/api/v1/keys/validate', { key: hidden })).body.license.customer_email).toBeNull();
    expect((await app('GET', `/api/v1/licenses/validate?license_key=${hidden}`)).body.customer_email).toBeNull();
    expect((await app('POST', '/api/v1/keys/validate', { key: shown })).body.license.customer_email).toBe(
      'shared@example.com',
    );
    expect((await validate(hidden)).body.license.customer_email).toBe('private@example.com'); // full keys see it
  });

  it('another account gets 404 on every licence endpoint', async () => {
    const key = await license(await product({ max_activations: 2 }));
    const act = (await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'm' })).body.id;
    const other = client(stack.url, (await stack.newAccount()).apiKey);
    const calls: [string, string, unknown?][] = [
      ['GET', `/api/v1/licenses/${key}`],
      ['PATCH', `/api/v1/licenses/${key}`, { customer_email: 'x@example.com' }],
      ['POST', `/api/v1/licenses/${key}/suspend`],
      ['POST', `/api/v1/licenses/${key}/reinstate`],
      ['POST', `/api/v1/licenses/${key}/revoke`],
      ['POST', `/api/v1/licenses/${key}/renew`],
      ['GET', `/api/v1/licenses/${key}/activations`],
      ['POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'evil' }],
      ['DELETE', `/api/v1/licenses/${key}/activations/${act}`],
    ];
    const productId = (await api('GET', `/api/v1/licenses/${key}`)).body.product_id;
    calls.push(
      ['PATCH', `/api/v1/products/${productId}`, { name: 'hijacked' }],
      ['GET', `/api/v1/products/${productId}`],
    );
    for (const [method, path, body] of calls)
      expect({ method, path, status: (await other(method, path, body)).status }).toEqual({ method, path, status: 404 });
    expect((await api('GET', `/api/v1/products/${productId}`)).body.name).toBe('Policy product');
    expect((await api('GET', `/api/v1/licenses/${key}`)).body).toMatchObject({ status: 'active', activations: 1 });
    expect((await api('GET', `/api/v1/licenses/${key}/activations`)).body.data).toHaveLength(1);
  });

  it('lists by status and refuses an unknown status', async () => {
    const id = await product();
    const a = await license(id);
    const b = await license(id);
    await api('POST', `/api/v1/licenses/${b}/suspend`);
    const suspended = (await api('GET', `/api/v1/licenses?status=suspended&product_id=${id}`)).body.data.map(
      (l: { key: string }) => l.key,
    );
    expect(suspended).toEqual([b]);
    expect(
      (await api('GET', `/api/v1/licenses?status=active&product_id=${id}`)).body.data.map(
        (l: { key: string }) => l.key,
      ),
    ).toEqual([a]);
    expect((await api('GET', '/api/v1/licenses?status=paused')).status).toBe(400);
  });
});
