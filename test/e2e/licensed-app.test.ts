import {
  LicensedApp,
  type LicensedAppOptions,
  type LicensingClient,
  LicensingError,
  type SigningKey,
} from '@licensing/client';
import { checkedFetch, sdk } from '../support/sdk';
import { startStack, TestClock, type Stack } from '../support/stack';

// Own stack: its clock is moved by hand (TestClock) to let a lease lapse.

// LicensedApp (the app's side of @licensing/client) against a whole running
// system, with nothing but the licence key: the vendor sets the product up
// with its full key, then every app request carries `Authorization: License …`
// (checked against the OpenAPI document by checkedFetch). A floating seat of
// 60 s, one seat, entitlement "pdf-export". The stack's clock is moved by hand
// to let a lease lapse without waiting.

const clock = new TestClock();
let stack: Stack;
let vendor: LicensingClient;
let productId: string;
let publicKeys: SigningKey[];
const running: LicensedApp[] = [];

beforeAll(async () => {
  stack = await startStack({}, {}, clock);
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  vendor = sdk(stack.url, acct.apiKey);
  productId = (
    await vendor.products.create({
      name: 'Floating desktop app',
      policy: { lease_seconds: 60, max_activations: 1, entitlements: ['pdf-export'] },
    })
  ).id;
  publicKeys = await vendor.products.signingKeys(productId);
});

afterAll(async () => {
  // A test that failed half-way leaves no timer behind.
  await Promise.allSettled(running.map((app) => app.stop()));
  await stack?.stop();
});

async function issue(): Promise<string> {
  const { license_key } = await vendor.licenses.create({ product_id: productId, customer_email: 'ada@example.com' });
  return license_key;
}

/** What the app sends, to prove it never carries an API key. */
const authorizations: string[] = [];
const recordingFetch: typeof fetch = (input, init) => {
  authorizations.push(String((init?.headers as Record<string, string> | undefined)?.authorization));
  return checkedFetch(input, init);
};

function licensedApp(licenseKey: string, fingerprint: string, extra: Partial<LicensedAppOptions> = {}) {
  const app = new LicensedApp({
    baseUrl: stack.url,
    licenseKey,
    fingerprint,
    publicKeys,
    productId,
    fetch: recordingFetch,
    maxRetries: 0,
    ...extra,
  });
  running.push(app);
  return app;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a LicensingError');
    },
    (e: unknown) => e as LicensingError,
  );

it('with the licence key alone: takes the floating seat, checks entitlements, refuses a second machine until stop() frees it', async () => {
  authorizations.length = 0;
  const key = await issue();
  const first = licensedApp(key, 'machine-a');
  const state = await first.start();
  expect(state).toMatchObject({
    activation: { fingerprint: 'machine-a', lease_expires_at: expect.any(String) },
    validation: { valid: true, code: 'valid', entitlements: ['pdf-export'] },
    entitlements: ['pdf-export'],
    leaseSeconds: 60,
    heartbeatEveryMs: 20_000,
  });
  expect(Date.parse(state.activation.lease_expires_at!)).toBeGreaterThan(clock.now().getTime());

  await expect(first.validate({ entitlements: ['pdf-export'] })).resolves.toMatchObject({
    valid: true,
    code: 'valid',
    next_action: 'none',
    entitlements: ['pdf-export'],
  });
  const missing = await first.validate({ entitlements: ['sso'] });
  expect(missing).toMatchObject({ valid: false, code: 'entitlements_missing', next_action: 'contact_vendor' });
  expect(missing.detail).toContain('sso');

  // A heartbeat answers the activation with a lease that runs from now.
  const renewed = await first.heartbeat();
  expect(renewed).toMatchObject({ id: state.activation.id, lease_expires_at: expect.any(String) });

  const second = licensedApp(key, 'machine-b');
  const refused = await failure(second.start());
  expect(refused).toBeInstanceOf(LicensingError);
  expect(refused).toMatchObject({ status: 409, code: 'conflict' });
  expect(refused.detail).toMatch(/^activation_limit_reached/);
  expect(second.isRunning).toBe(false);

  await first.stop();
  await first.stop(); // a second stop() sends nothing and fails nothing
  expect(first.activation).toBeNull();
  await expect(second.start()).resolves.toMatchObject({ activation: { fingerprint: 'machine-b' } });
  expect((await vendor.licenses.activations(key).page()).data.map((a) => a.fingerprint)).toEqual(['machine-b']);
  await second.stop();
  expect((await vendor.licenses.activations(key).page()).data).toEqual([]);

  // Every request of the apps carried the licence, never an API key.
  expect(authorizations.length).toBeGreaterThan(0);
  expect(new Set(authorizations)).toEqual(new Set([`License ${key}`]));
});

it('file() gives a signed file for this machine that verifyOffline() accepts, and another machine refuses', async () => {
  const key = await issue();
  const app = licensedApp(key, 'machine-offline');
  await app.start();
  const file = await app.file({ ttlDays: 7 });
  await expect(app.verifyOffline(file)).resolves.toMatchObject({
    valid: true,
    license: { license_key: key, product_id: productId, fingerprint: 'machine-offline' },
    entitlements: ['pdf-export'],
  });
  const elsewhere = new LicensedApp({ baseUrl: stack.url, licenseKey: key, fingerprint: 'machine-z', publicKeys });
  await expect(elsewhere.verifyOffline(file)).resolves.toMatchObject({ valid: false, reason: 'fingerprint_mismatch' });
  await expect(app.verifyOffline(file, { now: Date.now() + 8 * 86_400_000 })).resolves.toMatchObject({
    valid: false,
    reason: 'expired',
  });
  await app.stop();
});

it('a lapsed seat: validation says lease_expired, and heartbeat() takes a seat again by itself', async () => {
  const key = await issue();
  const app = licensedApp(key, 'machine-sleepy');
  // activate() without start(): no heartbeat timer that could renew the lease while the clock moves.
  const activation = await app.activate();
  expect(activation.lease_expires_at).toEqual(expect.any(String));
  clock.advance(61_000);
  await expect(app.validate()).resolves.toMatchObject({
    valid: false,
    code: 'lease_expired',
    next_action: 'activate',
  });
  // Another machine may now take the seat the lapsed one held.
  const other = licensedApp(key, 'machine-other');
  await expect(other.activate()).resolves.toMatchObject({ fingerprint: 'machine-other' });
  await other.deactivate();
  // The sleepy app heartbeats: its activation is gone, so it activates once more.
  const again = await app.heartbeat();
  expect(again).toMatchObject({ fingerprint: 'machine-sleepy', lease_expires_at: expect.any(String) });
  expect(Date.parse(again.lease_expires_at!)).toBeGreaterThan(clock.now().getTime());
  await expect(app.validate()).resolves.toMatchObject({ valid: true, code: 'valid' });
  expect(app.activation?.id).toBe(again.id);
  await app.stop();
});

it('client.licenses.heartbeat() renews a floating seat for the vendor’s own server', async () => {
  const key = await issue();
  const seat = await vendor.licenses.activate(key, { fingerprint: 'server-side' });
  const renewed = await vendor.licenses.heartbeat(key, seat.id);
  expect(renewed).toMatchObject({ id: seat.id, fingerprint: 'server-side', lease_expires_at: expect.any(String) });
  await vendor.licenses.deactivate(key, seat.id);
  const gone = await failure(vendor.licenses.heartbeat(key, seat.id));
  expect(gone.status).toBeGreaterThanOrEqual(400);
  expect(gone.status).toBeLessThan(500);
});
