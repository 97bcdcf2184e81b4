import { LicensedApp, LicensingError, type UpdateCheck } from '@licensing/client';
import { fakeFetch, json, problem } from '../../../../test/support/fake-fetch';
import { type LocalServer, localServer, sendJson } from './local-server';

// LicensedApp's update calls: checkForUpdate() against a scripted fetch (the query, the licence
// credential, both answers and a refusal), and downloadUrl(artifact) against a real local server
// (the 303 read, not followed; the credential never sent to another server).

const BASE = 'https://licensing.example.com';
const KEY = 'ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567';
const PROD = 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';
const REL = 'rel_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';

const app = (fetch: typeof globalThis.fetch, extra: Partial<ConstructorParameters<typeof LicensedApp>[0]> = {}) =>
  new LicensedApp({
    baseUrl: BASE,
    licenseKey: KEY,
    fingerprint: 'box-1',
    productId: PROD,
    fetch,
    maxRetries: 0,
    ...extra,
  });

const release = {
  id: REL,
  product_id: PROD,
  version: '2.1.0',
  channel: 'stable',
  status: 'published',
  notes: 'Faster exports',
  published_at: '2026-11-23T10:00:00Z',
  yanked_at: null,
  entitlements: [],
  artifacts: [],
  created_at: '2026-11-22T10:00:00Z',
};
const available = (base: string) => ({
  update_available: true,
  release,
  artifact: {
    filename: 'Photo Editor 2.1.0.dmg',
    platform: 'macos',
    arch: 'universal',
    url: `${base}/api/v1/releases/${REL}/artifacts/Photo%20Editor%202.1.0.dmg`,
    size: 1024,
    sha256: 'a'.repeat(64),
    signature: null,
  },
});

describe('checkForUpdate', () => {
  it('asks the product’s feed with the licence credential and answers a newer release with its file', async () => {
    const fake = fakeFetch(json(200, available(BASE)));
    const check: UpdateCheck = await app(fake.fetch).checkForUpdate({
      version: '2.0.0-beta.1+build.5',
      platform: 'macos',
      arch: 'aarch64',
      channel: 'beta',
    });
    expect(check).toEqual(available(BASE));
    // The union narrows on update_available.
    if (check.update_available) expect(check.artifact.sha256).toHaveLength(64);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]).toMatchObject({
      method: 'GET',
      url: `${BASE}/api/v1/products/${PROD}/updates?version=2.0.0-beta.1%2Bbuild.5&platform=macos&arch=aarch64&channel=beta`,
      headers: { authorization: `License ${KEY}` },
    });
  });

  it('answers {update_available: false}, and leaves the channel out when none is given', async () => {
    const fake = fakeFetch(json(200, { update_available: false }));
    await expect(
      app(fake.fetch).checkForUpdate({ version: '2.1.0', platform: 'windows', arch: 'x86_64' }),
    ).resolves.toEqual({ update_available: false });
    expect(fake.calls[0].url).toBe(
      `${BASE}/api/v1/products/${PROD}/updates?version=2.1.0&platform=windows&arch=x86_64`,
    );
  });

  it('a licence that may have no updates is a 403 LicensingError with its validation code and next action', async () => {
    const fake = fakeFetch(
      problem(403, 'forbidden', 'the licence expired', { validation_code: 'expired', next_action: 'renew' }),
    );
    const err = await app(fake.fetch)
      .checkForUpdate({ version: '2.0.0', platform: 'linux', arch: 'x86_64' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LicensingError);
    expect(err).toMatchObject({ status: 403, code: 'forbidden', validationCode: 'expired', nextAction: 'renew' });
    expect(new LicensingError({ status: 400, code: 'invalid_request', detail: 'x' }).validationCode).toBeNull();
  });

  it('needs the productId option and a version, platform and arch, and sends nothing without them', async () => {
    const fake = fakeFetch(json(200, { update_available: false }));
    const target = { version: '1.0.0', platform: 'linux', arch: 'x86_64' } as const;
    await expect(app(fake.fetch, { productId: undefined }).checkForUpdate(target)).rejects.toThrow(/pass productId/);
    await expect(app(fake.fetch).checkForUpdate({ ...target, version: '' })).rejects.toThrow(/version/);
    await expect(app(fake.fetch).checkForUpdate({ ...target, arch: undefined as never })).rejects.toThrow(/arch/);
    expect(fake.calls).toHaveLength(0);
  });
});

describe('downloadUrl', () => {
  let server: LocalServer;
  afterEach(() => server?.close());

  it('asks the artifact’s url with the licence credential and answers the 303 Location without following it', async () => {
    server = await localServer((_req, res) => {
      res.writeHead(303, { location: `/downloads/${REL}?token=t0k` }).end();
    });
    const licensed = app(globalThis.fetch, { baseUrl: server.base });
    const feed = available(server.base);
    await expect(licensed.downloadUrl(feed.artifact)).resolves.toBe(`${server.base}/downloads/${REL}?token=t0k`);
    expect(server.received.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /api/v1/releases/${REL}/artifacts/Photo%20Editor%202.1.0.dmg`,
    ]);
    expect(server.received[0].headers.authorization).toBe(`License ${KEY}`);
  });

  it('a refused download is the 403 with its validation code', async () => {
    server = await localServer((_req, res) =>
      sendJson(res, 403, {
        type: '/docs#error-forbidden',
        title: 'x',
        status: 403,
        code: 'forbidden',
        detail: 'this release needs the entitlement pro',
        validation_code: 'entitlements_missing',
        next_action: 'contact_vendor',
      }),
    );
    const err = await app(globalThis.fetch, { baseUrl: server.base })
      .downloadUrl(available(server.base).artifact)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403, validationCode: 'entitlements_missing', nextAction: 'contact_vendor' });
  });

  it('never sends the licence key to a url on another server', async () => {
    const fake = fakeFetch(json(200, {}));
    const licensed = app(fake.fetch);
    await expect(
      licensed.downloadUrl({ url: 'https://elsewhere.example/api/v1/releases/r/artifacts/a' }),
    ).rejects.toThrow(/must be on the licensing server/);
    await expect(licensed.downloadUrl({ url: 'not a url' })).rejects.toThrow(TypeError);
    const below = app(fake.fetch, { baseUrl: `${BASE}/licensing` });
    await expect(below.downloadUrl({ url: `${BASE}/other/api/v1/releases/r/artifacts/a` })).rejects.toThrow(TypeError);
    expect(fake.calls).toHaveLength(0);
  });
});
