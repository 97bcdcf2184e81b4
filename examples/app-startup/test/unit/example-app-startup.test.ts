import { LicensedApp } from '@licensing/client';
import { startLicensed } from '../../src/license-gate';
import { MemoryLicenseFileStore } from '../../src/license-file-store';
import { BASE, KEY, fakeServer, signingKeys } from '../../../../test/support/fake-licensing-server';

// The example app's start-up decision (examples/app-startup/src/license-gate.ts)
// against a scripted server: which answers let it run, which refuse it, and
// when the kept licence file stands in for the server. The same app against a
// running system: test/e2e/example-app-startup.test.ts.

const app = (server: ReturnType<typeof fakeServer>, fingerprint = 'box-1') =>
  new LicensedApp({
    baseUrl: BASE,
    licenseKey: KEY,
    fingerprint,
    publicKeys: signingKeys,
    fetch: server.fetch,
    maxRetries: 0,
  });

it('online: takes the seat, shows the entitlements, keeps a licence file; stop() frees the seat', async () => {
  const server = fakeServer({ lease_seconds: 60, entitlements: ['pdf-export'] });
  const store = new MemoryLicenseFileStore();
  const licensed = app(server);
  await expect(startLicensed({ app: licensed, store })).resolves.toEqual({
    allowed: true,
    source: 'server',
    code: 'valid',
    detail: expect.stringMatching(/^floating seat held until .+, renewed every 20000 ms$/),
    nextAction: 'none',
    entitlements: ['pdf-export'],
  });
  expect(await store.read()).toMatchObject({ algorithm: 'Ed25519', kid: 'key_1' });
  expect(server.seats.size).toBe(1);
  await licensed.stop();
  expect(server.seats.size).toBe(0);
});

it('refuses without a required feature, and then holds no seat', async () => {
  const server = fakeServer({ lease_seconds: 60, entitlements: ['pdf-export'] });
  const store = new MemoryLicenseFileStore();
  await expect(startLicensed({ app: app(server), store, required: ['pdf-export', 'sso'] })).resolves.toMatchObject({
    allowed: false,
    source: 'server',
    code: 'entitlements_missing',
    detail: expect.stringContaining('sso'),
    nextAction: 'contact_vendor',
  });
  expect(server.seats.size).toBe(0);
  expect(await store.read()).toBeUndefined();
});

it('refuses a second machine while the only seat is held, and names a suspended licence', async () => {
  const server = fakeServer({ lease_seconds: 60, max_activations: 1 });
  const store = new MemoryLicenseFileStore();
  const first = app(server);
  await startLicensed({ app: first, store });
  await expect(startLicensed({ app: app(server, 'box-2'), store })).resolves.toMatchObject({
    allowed: false,
    source: 'server',
    code: 'activation_limit_reached',
  });
  server.suspend();
  await expect(startLicensed({ app: app(server, 'box-3'), store })).resolves.toMatchObject({
    allowed: false,
    source: 'server',
    code: 'suspended',
    nextAction: 'contact_vendor',
  });
  // A suspended licence's credential is refused (401): its seat is the server's to reclaim.
  await expect(first.stop()).rejects.toMatchObject({ status: 401 });
  expect(first.isRunning).toBe(false);
});

it('without an answer, starts from the kept licence file of this machine only', async () => {
  const server = fakeServer({ lease_seconds: 60, entitlements: ['pdf-export'] });
  const store = new MemoryLicenseFileStore();
  const online = app(server);
  await startLicensed({ app: online, store });
  await online.stop();
  server.down(true);
  await expect(startLicensed({ app: app(server), store })).resolves.toMatchObject({
    allowed: true,
    source: 'license-file',
    code: 'valid',
    detail: expect.stringMatching(/^offline: licence file valid until /),
    entitlements: ['pdf-export'],
  });
  await expect(startLicensed({ app: app(server), store, required: ['sso'] })).resolves.toMatchObject({
    allowed: false,
    source: 'license-file',
    code: 'entitlements_missing',
  });
  await expect(startLicensed({ app: app(server, 'box-2'), store })).resolves.toMatchObject({
    allowed: false,
    source: 'license-file',
    code: 'fingerprint_mismatch',
  });
  await expect(startLicensed({ app: app(server), store: new MemoryLicenseFileStore() })).resolves.toMatchObject({
    allowed: false,
    source: 'none',
    code: 'unreachable',
  });
});
