import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicensingClient, type LicenseFile, type SigningKey } from '@licensing/client';
import { MemoryAnswerCache } from '../../examples/app-startup/src/answer-cache';
import { checkLicense, type GateOptions } from '../../examples/app-startup/src/license-gate';
import { main } from '../../examples/app-startup/src/main';
import { startStack, type Stack } from '../support/stack';
import { sdk } from '../support/sdk';

// The example app (examples/app-startup) against a running stack: the server's
// answer, the cache until cache_until, and the licence file when offline
// (a gateway address where nothing listens: a real failed connection).

let stack: Stack;
let vendor: LicensingClient;
let inApp: LicensingClient;
let validateKey: string;
let productId: string;
let publicKeys: SigningKey[];
let dir: string;
const OFFLINE = 'http://127.0.0.1:1';

beforeAll(async () => {
  stack = await startStack();
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  vendor = sdk(stack.url, acct.apiKey);
  validateKey = (
    await stack.admin.createApiKey({ account_id: acct.accountId, scope: 'validate', name: 'shipped in the app' })
  ).secret;
  inApp = sdk(stack.url, validateKey);
  productId = (await vendor.products.create({ name: 'Desktop app', policy: { duration_days: 30 } })).id;
  dir = await mkdtemp(join(tmpdir(), 'app-startup-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await stack?.stop();
});

async function licensed() {
  const { license_key: key } = await vendor.licenses.create({
    product_id: productId,
    customer_email: 'user@example.com',
  });
  const file = await vendor.licenses.file(key, { ttlDays: 7 });
  publicKeys = await vendor.products.signingKeys(productId);
  return { key, file };
}

/** A client that counts what it sends, to tell answers from the cache apart. */
function counted(baseUrl: string) {
  const sent: string[] = [];
  const client = new LicensingClient({
    baseUrl,
    apiKey: validateKey,
    maxRetries: 0,
    fetch: (input, init) => {
      sent.push(String(input));
      return fetch(input, init);
    },
  });
  return { client, sent };
}

const gate = (o: Partial<GateOptions> & Pick<GateOptions, 'licenseKey'>) =>
  checkLicense({ client: inApp, productId, cache: new MemoryAnswerCache(), ...o });

it('asks the server once, then trusts the answer until cache_until', async () => {
  const { key } = await licensed();
  const { client, sent } = counted(stack.url);
  const cache = new MemoryAnswerCache();
  await expect(gate({ client, licenseKey: key, cache })).resolves.toMatchObject({
    allowed: true,
    source: 'server',
    code: 'valid',
  });
  await expect(gate({ client, licenseKey: key, cache })).resolves.toMatchObject({
    allowed: true,
    source: 'cache',
    code: 'valid',
  });
  expect(sent).toHaveLength(1);
  const cacheUntil = Date.parse((await cache.read())!.answer.cache_until);
  await expect(gate({ client, licenseKey: key, cache, now: () => cacheUntil + 1 })).resolves.toMatchObject({
    source: 'server',
  });
  expect(sent).toHaveLength(2);
});

it('a "no" from the server is final, even with a valid licence file at hand', async () => {
  const { key, file } = await licensed();
  await vendor.licenses.suspend(key);
  const result = await gate({ licenseKey: key, offline: { licenseFile: async () => file, publicKeys } });
  expect(result).toMatchObject({ allowed: false, source: 'server', code: 'suspended' });
});

it('offline, it starts on a verified licence file of this key, and not on a changed or foreign one', async () => {
  const { key, file } = await licensed();
  const offline = new LicensingClient({ baseUrl: OFFLINE, apiKey: validateKey, maxRetries: 0 });
  const withFile = (f: LicenseFile) =>
    gate({ client: offline, licenseKey: key, offline: { licenseFile: async () => f, publicKeys } });
  await expect(withFile(file)).resolves.toMatchObject({ allowed: true, source: 'license-file', code: 'valid' });
  await expect(
    withFile({ ...file, signature: file.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }),
  ).resolves.toMatchObject({ allowed: false, code: 'bad_signature' });
  const other = await licensed();
  await expect(withFile(other.file)).resolves.toMatchObject({ allowed: false, code: 'other_license' });
  await expect(gate({ client: offline, licenseKey: key })).resolves.toMatchObject({
    allowed: false,
    source: 'none',
    code: 'unreachable',
  });
});

it('a misconfigured app (bad API key) is told so instead of falling back', async () => {
  const { key, file } = await licensed();
  const wrong = new LicensingClient({ baseUrl: stack.url, apiKey: 'lk_val_wrong', maxRetries: 0 });
  await expect(
    gate({ client: wrong, licenseKey: key, offline: { licenseFile: async () => file, publicKeys } }),
  ).rejects.toMatchObject({ status: 401 });
});

it('main(): starts with the server, and with the files on disk when offline', async () => {
  const { key, file } = await licensed();
  const files = {
    LICENSE_FILE: join(dir, 'license.json'),
    PUBLIC_KEYS: join(dir, 'keys.json'),
    LICENSE_CACHE: join(dir, 'cache.json'),
  };
  await writeFile(files.LICENSE_FILE, JSON.stringify(file));
  await writeFile(files.PUBLIC_KEYS, JSON.stringify({ data: publicKeys }));
  const lines: string[] = [];
  const env = { LICENSING_API_KEY: validateKey, LICENSE_KEY: key, PRODUCT_ID: productId, ...files };
  await expect(main({ ...env, LICENSING_URL: stack.url }, (l) => lines.push(l))).resolves.toBe(0);
  await expect(
    main({ ...env, LICENSING_URL: OFFLINE, LICENSE_CACHE: join(dir, 'other-cache.json') }, (l) => lines.push(l)),
  ).resolves.toBe(0);
  await expect(
    main(
      {
        ...env,
        LICENSING_URL: OFFLINE,
        LICENSE_CACHE: join(dir, 'third-cache.json'),
        LICENSE_FILE: join(dir, 'missing.json'),
      },
      (l) => lines.push(l),
    ),
  ).resolves.toBe(1);
  await expect(main({}, (l) => lines.push(l))).resolves.toBe(2);
  expect(lines).toEqual([
    expect.stringMatching(/^Licence OK \(from server, expires /),
    expect.stringMatching(/^Licence OK \(from license-file, expires /),
    expect.stringMatching(/^Licence refused \(unreachable, from none\)/),
    'set LICENSING_URL, LICENSING_API_KEY, LICENSE_KEY (see examples/app-startup/README.md)',
  ]);
});
