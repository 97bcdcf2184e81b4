import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LicensingClient } from '@licensing/client';
import { main } from '../../examples/app-startup/src/main';
import { sdk } from '../support/sdk';
import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';

// The example app (examples/app-startup) against a running stack, with the
// licence key as its only credential: it takes a floating seat, shows the
// features, refuses a second machine while the seat is held, releases the seat
// on stop, and starts offline from the licence file it kept (a gateway address
// where nothing listens: a real failed connection).

let stack: OpenSharedStack;
let vendor: LicensingClient;
let productId: string;
let dir: string;
const OFFLINE = 'http://127.0.0.1:1';

beforeAll(async () => {
  stack = await openSharedStack();
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  vendor = sdk(stack.url, acct.apiKey);
  productId = (
    await vendor.products.create({
      name: 'Desktop app',
      policy: { duration_days: 30, lease_seconds: 60, max_activations: 1, entitlements: ['pdf-export'] },
    })
  ).id;
  dir = await mkdtemp(join(tmpdir(), 'app-startup-'));
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ data: await vendor.products.signingKeys(productId) }));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await stack?.close();
});

/** The settings of one installation: its licence key, machine and files, no API key. */
async function installation(machine: string, key?: string) {
  const licenseKey =
    key ?? (await vendor.licenses.create({ product_id: productId, customer_email: 'user@example.com' })).license_key;
  return {
    LICENSING_URL: stack.url,
    LICENSE_KEY: licenseKey,
    PRODUCT_ID: productId,
    MACHINE_FINGERPRINT: machine,
    PUBLIC_KEYS: join(dir, 'keys.json'),
    LICENSE_FILE: join(dir, `${machine}-license.json`),
  };
}

const seats = async (key: string) => (await vendor.licenses.activations(key).page()).data.map((a) => a.fingerprint);

it('takes the seat and shows the features; a second machine is refused until the first stops', async () => {
  const env = await installation('machine-a');
  const lines: string[] = [];
  const first = await main(env, (l) => lines.push(l));
  expect(first.exitCode).toBe(0);
  expect(lines).toEqual([
    expect.stringMatching(/^Licence OK \(from server\): floating seat held until .+, renewed every 20000 ms\.$/),
    'Features: pdf-export.',
  ]);
  expect(await seats(env.LICENSE_KEY)).toEqual(['machine-a']);
  // It kept a signed licence file for starts without network.
  expect(JSON.parse(await readFile(env.LICENSE_FILE, 'utf8'))).toMatchObject({ algorithm: 'Ed25519' });

  const other = await installation('machine-b', env.LICENSE_KEY);
  const refused: string[] = [];
  await expect(main(other, (l) => refused.push(l))).resolves.toMatchObject({ exitCode: 1 });
  // Every seat taken: the advice to free one, and the seat rescue mail to the licence's owner (once an hour).
  expect(refused).toEqual([
    expect.stringMatching(
      /^Licence refused \(activation_limit_reached, from server\).* free one of your other machines/,
    ),
    "We e-mailed the licence's owner a link to free a seat; start the app again once one is freed.",
  ]);
  const again: string[] = [];
  await main(other, (l) => again.push(l));
  expect(again[1]).toBe('A link to free a seat was e-mailed within the last hour: use that one.');

  await first.stop();
  await first.stop();
  expect(await seats(env.LICENSE_KEY)).toEqual([]);
  const second = await main(other, () => undefined);
  expect(second.exitCode).toBe(0);
  await second.stop();
});

it('refuses a licence without a required feature; a "no" from the server is final even with a kept licence file', async () => {
  const env = await installation('machine-c');
  const online = await main(env, () => undefined);
  expect(online.exitCode).toBe(0);
  await online.stop();
  expect(JSON.parse(await readFile(env.LICENSE_FILE, 'utf8'))).toMatchObject({ algorithm: 'Ed25519' });

  const lines: string[] = [];
  await expect(main({ ...env, REQUIRED_FEATURES: 'pdf-export, sso' }, (l) => lines.push(l))).resolves.toMatchObject({
    exitCode: 1,
  });
  expect(lines).toEqual([
    expect.stringMatching(/^Licence refused \(entitlements_missing, from server\): .*sso.* Contact the vendor/),
  ]);
  expect(await seats(env.LICENSE_KEY)).toEqual([]);

  await vendor.licenses.suspend(env.LICENSE_KEY);
  lines.length = 0;
  await expect(main(env, (l) => lines.push(l))).resolves.toMatchObject({ exitCode: 1 });
  expect(lines).toEqual([expect.stringMatching(/^Licence refused \(suspended, from server\)/)]);
});

it('offline, it starts on the licence file it kept, on this machine only, and says so when there is none', async () => {
  const env = await installation('machine-d');
  const online = await main(env, () => undefined);
  expect(online.exitCode).toBe(0);
  await online.stop();

  const lines: string[] = [];
  await expect(main({ ...env, LICENSING_URL: OFFLINE }, (l) => lines.push(l))).resolves.toMatchObject({ exitCode: 0 });
  // The file of machine-d copied to machine-e is worthless there.
  await expect(
    main({ ...env, LICENSING_URL: OFFLINE, MACHINE_FINGERPRINT: 'machine-e' }, (l) => lines.push(l)),
  ).resolves.toMatchObject({ exitCode: 1 });
  await expect(
    main({ ...env, LICENSING_URL: OFFLINE, LICENSE_FILE: join(dir, 'missing.json') }, (l) => lines.push(l)),
  ).resolves.toMatchObject({ exitCode: 1 });
  await expect(main({}, (l) => lines.push(l))).resolves.toMatchObject({ exitCode: 2 });
  expect(lines).toEqual([
    expect.stringMatching(/^Licence OK \(from license-file\): offline: licence file valid until /),
    'Features: pdf-export.',
    expect.stringMatching(/^Licence refused \(fingerprint_mismatch, from license-file\)/),
    expect.stringMatching(/^Licence refused \(unreachable, from none\)/),
    'set LICENSING_URL, LICENSE_KEY (see examples/app-startup/README.md)',
  ]);
});
