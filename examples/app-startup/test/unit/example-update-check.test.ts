import { LicensedApp } from '@licensing/client';
import { updateNotice } from '../../src/update-check';
import { fakeFetch, json, problem } from '../../../../test/support/fake-fetch';

// The example app's update check at start-up (examples/app-startup/src/update-check.ts) against a
// scripted feed: the line it prints for each answer, and that no failure escapes it.

const BASE = 'https://licensing.example.test';
const app = (fetch: typeof globalThis.fetch) =>
  new LicensedApp({
    baseUrl: BASE,
    licenseKey: '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG',
    fingerprint: 'box-1',
    productId: 'prod_1',
    fetch,
    maxRetries: 0,
  });
const here = { version: '1.4.2', platform: 'darwin', arch: 'arm64' };

it('names a newer version and its file for this machine, asked in the feed’s words', async () => {
  const fake = fakeFetch(
    json(200, {
      update_available: true,
      release: { id: 'rel_1', version: '1.5.0', channel: 'stable', notes: 'Faster exports\nand more' },
      artifact: { filename: 'Editor-1.5.0.dmg', platform: 'macos', arch: 'universal', url: `${BASE}/x`, size: 2048 },
    }),
  );
  await expect(updateNotice(app(fake.fetch), here)).resolves.toBe(
    'Update available: 1.5.0 (stable), Editor-1.5.0.dmg, 2048 bytes. Faster exports',
  );
  expect(fake.calls[0].url).toBe(`${BASE}/api/v1/products/prod_1/updates?version=1.4.2&platform=macos&arch=aarch64`);
});

it('says when it is up to date, and when this machine has no builds (asking nothing)', async () => {
  const fake = fakeFetch(json(200, { update_available: false }));
  await expect(updateNotice(app(fake.fetch), { ...here, channel: 'beta' })).resolves.toBe('Up to date (1.4.2).');
  expect(fake.calls[0].url).toContain('&channel=beta');
  await expect(updateNotice(app(fake.fetch), { ...here, platform: 'freebsd' })).resolves.toMatch(/^No update check/);
  expect(fake.calls).toHaveLength(1);
});

it('a refusal names the licence’s code and what to do; any other failure leaves the app running', async () => {
  const refused = fakeFetch(
    problem(403, 'forbidden', 'the licence expired', { validation_code: 'expired', next_action: 'renew' }),
  );
  await expect(updateNotice(app(refused.fetch), here)).resolves.toBe(
    'No updates for this licence (expired): the licence expired. Renew your licence to get them.',
  );
  const down = fakeFetch(new TypeError('fetch failed'));
  await expect(updateNotice(app(down.fetch), here)).resolves.toMatch(/^Update check failed \(the app runs as it is\)/);
});
