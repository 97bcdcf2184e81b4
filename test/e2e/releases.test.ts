import { createHash, randomBytes } from 'node:crypto';
import { client, startStack, TestClock, type Stack } from '../support/stack';
import { startArtifactStores, type ArtifactStoreUnderTest } from '../support/artifact-stores';
import { SEAWEEDFS_WAIT_MS } from '../../scripts/lib/seaweedfs';

// Own stack: its clock is moved by hand (TestClock) so a licence expires between two releases.

// A vendor ships versions only to customers whose licence allows them, once over the gateway's own
// files (DATA_DIR/artifacts) and once over a real S3-compatible store: uploads of 1.0.0, 1.1.0 and
// 2.0.0-beta.1; a licensed app offered 1.1.0 and downloading it byte for byte; the beta only with
// channel.beta; an expired licence under maintain_access keeping 1.0.0 (published before its expiry)
// and refused 1.1.0; a yanked release gone from every feed.

const DAY = 24 * 3600_000;
let stores: ArtifactStoreUnderTest[];

beforeAll(async () => {
  stores = await startArtifactStores();
}, SEAWEEDFS_WAIT_MS);

afterAll(async () => {
  await Promise.allSettled(stores.map((s) => s.stop()));
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The walk over one store (its stack made and stopped here). */
async function walk(store: ArtifactStoreUnderTest): Promise<void> {
  const clock = new TestClock();
  const stack: Stack = await startStack(store.topology, {}, clock);
  try {
    await releaseWalk(stack, clock);
  } finally {
    await stack.stop();
  }
}

it('over the gateway’s own files: offers, downloads, channels, access after expiry, yanks', async () => {
  await walk(stores.find((s) => s.kind === 'file')!);
});

it('over an S3-compatible store: the same walk, downloads through presigned links', async () => {
  await walk(stores.find((s) => s.kind === 's3')!);
});

async function releaseWalk(stack: Stack, clock: TestClock): Promise<void> {
  const { accountId, apiKey } = await stack.newAccount();
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000 });
  const api = client(stack.url, apiKey);
  const product = await api('POST', '/api/v1/products', {
    name: 'Desktop app',
    policy: { duration_days: 30, expiration_strategy: 'maintain_access' },
  });
  expect(product.status).toBe(201);
  const productId = product.body.id as string;
  const issue = async () =>
    (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'ada@example.com' })).body
      .license_key as string;

  // Issued now, expired (30 days, no grace) once the clock has moved 31 days.
  const oldLicence = await issue();
  const files = new Map<string, Buffer>();
  const release = async (version: string) => {
    const made = await api('POST', `/api/v1/products/${productId}/releases`, { version });
    expect(made.status).toBe(201);
    const body = randomBytes(256 * 1024 + version.length);
    const name = `app-${version}.dmg`;
    files.set(version, body);
    const put = await fetch(
      `${stack.url}/api/v1/releases/${made.body.id}/artifacts/${name}?platform=macos&arch=universal`,
      {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/octet-stream',
          'x-artifact-signature': `sig-${version}`,
        },
        body,
      },
    );
    expect(put.status).toBe(201);
    expect(await put.json()).toMatchObject({
      filename: name,
      size: body.length,
      sha256: sha256(body),
      signature: `sig-${version}`,
    });
    expect((await api('POST', `/api/v1/releases/${made.body.id}/publish`)).body.status).toBe('published');
    return made.body.id as string;
  };
  await release('1.0.0');
  clock.advance(31 * DAY);
  const r110 = await release('1.1.0');
  await release('2.0.0-beta.1');
  const licence = await issue();

  const app = (key: string) => ({ authorization: `License ${key}` });
  const check = async (key: string, query: string) => {
    const res = await fetch(`${stack.url}/api/v1/products/${productId}/updates?${query}`, { headers: app(key) });
    return { status: res.status, body: (await res.json()) as any };
  };

  // Offered 1.1.0, downloaded byte for byte through the link (303, then the file).
  const offer = await check(licence, 'version=1.0.0&platform=macos&arch=aarch64');
  expect(offer.body).toMatchObject({ update_available: true, release: { version: '1.1.0' } });
  expect(offer.body.artifact).toMatchObject({ platform: 'macos', arch: 'universal', signature: 'sig-1.1.0' });
  const redirect = await fetch(offer.body.artifact.url, { headers: app(licence), redirect: 'manual' });
  expect(redirect.status).toBe(303);
  const bytes = Buffer.from(await (await fetch(redirect.headers.get('location')!)).arrayBuffer());
  expect(sha256(bytes)).toBe(offer.body.artifact.sha256);
  expect(bytes.equals(files.get('1.1.0')!)).toBe(true);
  expect((await check(licence, 'version=1.1.0&platform=macos')).body).toEqual({ update_available: false });
  // Bad feed requests are refused naming what is wrong.
  const badVersion = await check(licence, 'version=v1&platform=macos');
  expect([badVersion.status, badVersion.body.errors?.[0]?.field]).toEqual([400, 'version']);
  const badPlatform = await check(licence, 'version=1.0.0&platform=amiga');
  expect([badPlatform.status, badPlatform.body.errors?.[0]?.field]).toEqual([400, 'platform']);
  for (const [path, field] of [
    ['beos/aarch64/1.0.0', 'target'],
    ['darwin/mips/1.0.0', 'arch'],
    ['darwin/aarch64/one', 'current_version'],
  ]) {
    const res = await fetch(`${stack.url}/api/v1/products/${productId}/updates/tauri/${path}`, {
      headers: app(licence),
    });
    expect([res.status, ((await res.json()) as any).errors?.[0]?.field]).toEqual([400, field]);
  }

  // The beta: not offered without channel.beta, offered with it.
  expect((await check(licence, 'version=1.0.0&channel=beta')).body.release.version).toBe('1.1.0');
  expect((await api('PATCH', `/api/v1/licenses/${licence}`, { entitlements: ['channel.beta'] })).status).toBe(200);
  expect((await check(licence, 'version=1.0.0&channel=beta')).body.release.version).toBe('2.0.0-beta.1');

  // Expired under maintain_access: 1.0.0 (published before its expiry) still, 1.1.0 never.
  const validation = await fetch(`${stack.url}/api/v1/licenses/validate?license_key=${oldLicence}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  expect(await validation.json()).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' });
  expect((await check(oldLicence, 'version=0.9.0&platform=macos')).body.release.version).toBe('1.0.0');
  expect((await check(oldLicence, 'version=1.0.0')).body).toEqual({ update_available: false });
  const refused = await fetch(`${stack.url}/api/v1/releases/${r110}/artifacts/app-1.1.0.dmg`, {
    headers: app(oldLicence),
    redirect: 'manual',
  });
  expect(refused.status).toBe(403);
  expect(await refused.json()).toMatchObject({ code: 'forbidden', validation_code: 'expired', next_action: 'renew' });

  // Yanked: gone from the JSON feed, the appcast and the Tauri answer; its download refused.
  const appcast = async () =>
    (await fetch(`${stack.url}/api/v1/products/${productId}/appcast.xml?license_key=${licence}`)).text();
  expect(await appcast()).toContain('<sparkle:version>1.1.0</sparkle:version>');
  expect(
    (
      await fetch(`${stack.url}/api/v1/products/${productId}/updates/tauri/darwin/aarch64/1.0.0`, {
        headers: app(licence),
      })
    ).status,
  ).toBe(200);
  expect((await api('POST', `/api/v1/releases/${r110}/yank`)).body.status).toBe('yanked');
  expect((await check(licence, 'version=1.0.0')).body).toEqual({ update_available: false });
  expect(await appcast()).not.toContain('1.1.0');
  expect(
    (
      await fetch(`${stack.url}/api/v1/products/${productId}/updates/tauri/darwin/aarch64/1.0.0`, {
        headers: app(licence),
      })
    ).status,
  ).toBe(204);
  const gone = await fetch(`${stack.url}/api/v1/releases/${r110}/artifacts/app-1.1.0.dmg`, {
    headers: app(licence),
    redirect: 'manual',
  });
  expect(gone.status).toBe(403);
  // The download was counted once (the 303 above).
  const counted = await api('GET', `/api/v1/releases/${r110}`);
  expect(counted.body.artifacts[0].downloads).toBe(1);
}
