import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Connection } from 'mongoose';
import { connectMongo } from '@licensing/runtime';
import { client, startStack, type Stack } from '../support/stack';
import { WebhookReceiver, verifySignature } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';
import { envFor, type Topology } from '../../scripts/lib/topology';
import type { Component } from '../../scripts/lib/components';

// The runbook of docs/operations.md, "Rotating secrets", step by step against a running system:
// the sealing keys (SIGNING_KEY_SECRET, WEBHOOK_SECRET_KEY) start as one bare key A, B is added
// (A still seals), B becomes current, the re-seal job (the operator CLI, as an operator runs it)
// moves everything to B, and A is dropped; licence files are still signed and webhook deliveries
// still signed with the endpoint's secret throughout. The API-key pepper likewise: old keys keep
// working while new ones use the new pepper, including with the previous step's settings.
// Own stack: it rotates the sealing keys and the pepper, restarting every service with new settings.
const exec = promisify(execFile);
const root = join(__dirname, '..', '..');
const b64 = () => randomBytes(32).toString('base64');
const A = b64();
const B = b64();
const WA = b64();
const WB = b64();
const P = randomBytes(24).toString('hex');
const Q = randomBytes(24).toString('hex');
// Each step restarts services and runs the CLI in processes of its own: minutes on a loaded two-core machine.
jest.setTimeout(180_000);

let stack: Stack;
let receiver: WebhookReceiver;
let api: ReturnType<typeof client>;
let accountId: string;
let oldKey: string;
let productId: string;
let licenseKey: string;
let hookSecret: string;
let productDb: Connection;
let webhookDb: Connection;

beforeAll(async () => {
  if (!existsSync(join(root, 'scripts', 'dist', 'admin.js')))
    await exec(process.execPath, [join(root, 'scripts', 'build.mjs')]);
  stack = await startStack({ signingKeySecret: A, webhookSecretKey: WA, apiKeyPepper: P });
  receiver = await WebhookReceiver.start();
  const acct = await stack.newAccount();
  accountId = acct.accountId;
  oldKey = acct.apiKey;
  api = client(stack.url, oldKey);
  productId = (await api('POST', '/api/v1/products', { name: 'Rotated' })).body.id;
  licenseKey = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'r@example.com' })).body
    .license_key;
  hookSecret = (await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/hook`, events: ['license.created'] }))
    .body.secret;
  productDb = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_product`);
  webhookDb = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_webhook`);
});

afterAll(async () => {
  await productDb?.close();
  await webhookDb?.close();
  await receiver?.stop();
  await stack?.stop();
});

/** One service after another restarted with the new settings, as a rolling update does. */
async function rollOut(change: Partial<Topology>, names: Component[]) {
  Object.assign(stack.topology, change);
  for (const name of names) {
    await stack.stopService(name);
    await stack.restartService(name);
  }
}

/** A job of the operator CLI, in its own process, with the service's own settings. */
async function job(command: string, service: Component) {
  const env = {
    PATH: process.env.PATH,
    ...envFor(service, stack.topology, { port: 0, httpPort: 0, addrs: stack.addrs }),
  };
  try {
    const { stdout } = await exec(
      process.execPath,
      [join(root, 'scripts', 'dist', 'admin.js'), command, '--service', service],
      {
        env,
      },
    );
    return { code: 0, out: JSON.parse(stdout) };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout ? JSON.parse(e.stdout) : e.stderr };
  }
}

let delivered = 0;
/** Everything that needs the sealed secrets still works: a licence file is signed, a delivery is signed with the endpoint's secret. */
async function everythingOpens() {
  const file = await api('POST', `/api/v1/licenses/${licenseKey}/file`, {});
  expect(file.status).toBe(201);
  expect((await api('POST', '/api/v1/keys/validate', { key: licenseKey })).body.valid).toBe(true);
  await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: `d${delivered}@example.com` });
  delivered++;
  const got = await receiver.waitFor('/hook', delivered);
  expect(verifySignature(hookSecret, got[delivered - 1])).toBe(true);
}

const sealedSigningKeys = async () =>
  (await productDb.collection('signing_keys').find({}).toArray()).map((d) => String(d.private_key_sealed));
const sealedHookSecrets = async () =>
  (await webhookDb.collection('webhook_endpoints').find({}).toArray()).flatMap((d) =>
    (d.secrets as { sealed: string }[]).map((s) => s.sealed),
  );

it('sealing keys: add B, make it current, re-seal, drop A; everything still opens at every step', async () => {
  await everythingOpens();
  expect((await sealedSigningKeys()).every((s) => !s.includes('.'))).toBe(true); // the bare key's format

  // 1. B is known everywhere; A still seals.
  await rollOut({ signingKeySecret: `${A},k2:${B}`, webhookSecretKey: `${WA},w2:${WB}` }, ['product', 'webhook']);
  await everythingOpens();

  // 2. B seals new values (a rotated product key, a new endpoint); A still opens the older ones.
  await rollOut({ signingKeySecret: `k2:${B},${A}`, webhookSecretKey: `w2:${WB},${WA}` }, ['product', 'webhook']);
  expect((await api('POST', `/api/v1/products/${productId}/signing-keys/rotate`, {})).status).toBeLessThan(300);
  const second = await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/second`, events: ['product.created'] });
  expect(second.status).toBe(201);
  expect((await sealedSigningKeys()).filter((s) => s.startsWith('k2.'))).toHaveLength(1);
  await everythingOpens();

  // 3. The re-seal job moves everything to B, with services serving; run twice, the second changes nothing.
  const first = await job('reseal', 'product');
  expect(first).toEqual({
    code: 0,
    out: expect.objectContaining({ service: 'product', key_id: 'k2', resealed: 1, unreadable: [] }),
  });
  expect((await job('reseal', 'product')).out).toMatchObject({ resealed: 0, unreadable: [] });
  expect((await job('reseal', 'webhook')).out).toMatchObject({ key_id: 'w2', resealed: 1, unreadable: [] });
  expect((await job('reseal', 'webhook')).out).toMatchObject({ resealed: 0 });
  expect((await sealedSigningKeys()).every((s) => s.startsWith('k2.'))).toBe(true);
  expect((await sealedHookSecrets()).every((s) => s.startsWith('w2.'))).toBe(true);
  await everythingOpens();

  // 4. A is dropped: nothing needed it any more.
  await rollOut({ signingKeySecret: `k2:${B}`, webhookSecretKey: `w2:${WB}` }, ['product', 'webhook']);
  await everythingOpens();
});

it('a re-seal with a key missing names what it cannot open and exits non-zero, changing nothing', async () => {
  const before = await sealedSigningKeys();
  Object.assign(stack.topology, { signingKeySecret: `k3:${b64()}` });
  const r = await job('reseal', 'product');
  Object.assign(stack.topology, { signingKeySecret: `k2:${B}` });
  expect(r.code).toBe(1);
  expect(r.out.unreadable.length).toBe(before.length);
  expect(r.out.resealed).toBe(0);
  expect(await sealedSigningKeys()).toEqual(before);
  // A bad setting is refused with the setting's name, never the key.
  Object.assign(stack.topology, { webhookSecretKey: 'w2:short' });
  const bad = await job('reseal', 'webhook');
  Object.assign(stack.topology, { webhookSecretKey: `w2:${WB}` });
  expect(bad.code).toBe(1);
  expect(JSON.stringify(bad.out)).toContain('WEBHOOK_SECRET_KEY');
  // Usage errors exit 2 and say what is expected.
  const cli = (...args: string[]) =>
    exec(process.execPath, [join(root, 'scripts', 'dist', 'admin.js'), ...args], {
      env: { PATH: process.env.PATH },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
  expect(await cli('reseal', '--service', 'license')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('--service must be one of product, webhook'),
  });
  expect(await cli('migrate')).toMatchObject({ code: 2, stderr: expect.stringContaining('migrate needs --service') });
  expect(await cli('migrate', '--service', 'product', '--account', 'x')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('migrate does not take --account'),
  });
});

it('API-key pepper: new keys get the new pepper, old keys verify throughout, even on a process one step behind', async () => {
  const works = async (key: string) => (await client(stack.url, key)('GET', '/api/v1/products')).status;
  // 1. The new pepper is known; the old one still digests new keys.
  await rollOut({ apiKeyPepper: `legacy:${P},p2:${Q}` }, ['account']);
  expect(await works(oldKey)).toBe(200);
  // 2. The new pepper digests new keys.
  await rollOut({ apiKeyPepper: `p2:${Q},legacy:${P}` }, ['account']);
  const newKey = (await stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: 'after' })).secret;
  expect(await works(newKey)).toBe(200);
  expect(await works(oldKey)).toBe(200);
  expect((await job('pepper-usage', 'account')).out).toMatchObject({
    current: 'p2',
    configured: ['p2', 'legacy'],
    live_keys: expect.objectContaining({ p2: 1 }),
  });
  // A replica still on step 1 (a rollout under way, or a rollback) verifies the new key too.
  await rollOut({ apiKeyPepper: `legacy:${P},p2:${Q}` }, ['account']);
  expect(await works(newKey)).toBe(200);
  expect(await works(oldKey)).toBe(200);
  // 3. Once no live key needs it, the old pepper is dropped: here the old key is still live, so it stops working.
  await rollOut({ apiKeyPepper: `p2:${Q}` }, ['account']);
  expect(await works(newKey)).toBe(200);
  await eventually(async () => expect(await works(oldKey)).toBe(401));
});
