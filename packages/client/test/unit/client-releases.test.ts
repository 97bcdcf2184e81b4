import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { LicensingClient, LicensingError, type Release } from '@licensing/client';
import { fakeFetch, json, problem } from '../../../../test/support/fake-fetch';
import { type LocalServer, localServer, sendJson } from './local-server';

// client.releases: what each call asks the API for (a scripted fetch), and against a real local
// server what only the platform's fetch shows: a Readable streamed as it is read, and a 303 whose
// Location is answered without being followed.

const BASE = 'https://licensing.example.com';
const REL = 'rel_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';
const PROD = 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';
/** A file name with spaces, an en dash and an umlaut, as a vendor may name an installer. */
const FILENAME = 'My App 2.0 – Über.dmg';
const ENCODED = 'My%20App%202.0%20%E2%80%93%20%C3%9Cber.dmg';

const release: Release = {
  id: REL,
  product_id: PROD,
  version: '2.0.0',
  channel: 'stable',
  status: 'draft',
  notes: null,
  published_at: null,
  yanked_at: null,
  entitlements: [],
  artifacts: [],
  created_at: '2026-11-23T10:00:00Z',
};
const artifact = {
  filename: FILENAME,
  platform: 'macos',
  arch: 'universal',
  size: 3,
  sha256: createHash('sha256').update('abc').digest('hex'),
  signature: null,
  downloads: 0,
  created_at: '2026-11-23T10:00:00Z',
};

const vendor = (fetch: typeof globalThis.fetch, base = BASE) =>
  new LicensingClient({ baseUrl: base, apiKey: 'lk_full_x', fetch, maxRetries: 1 });
/** A 503 that asks for no wait, so the retry comes at once. */
const unavailable = () => problem(503, 'service_unavailable', 'down', {}, { 'retry-after': '0' });

describe('requests', () => {
  it('create, get, publish, yank and delete go to their paths with the API key', async () => {
    const fake = fakeFetch(json(201, release), json(200, release));
    const client = vendor(fake.fetch);
    await client.releases.create(
      PROD,
      { version: '2.0.0', channel: 'beta', notes: 'Faster' },
      { idempotencyKey: 'k-1' },
    );
    await client.releases.get(REL);
    await client.releases.publish(REL);
    await client.releases.yank(REL);
    await expect(client.releases.delete(REL)).resolves.toEqual(release);
    expect(fake.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      `POST ${BASE}/api/v1/products/${PROD}/releases`,
      `GET ${BASE}/api/v1/releases/${REL}`,
      `POST ${BASE}/api/v1/releases/${REL}/publish`,
      `POST ${BASE}/api/v1/releases/${REL}/yank`,
      `DELETE ${BASE}/api/v1/releases/${REL}`,
    ]);
    expect(fake.calls.every((c) => c.headers.authorization === 'Bearer lk_full_x')).toBe(true);
    expect(JSON.parse(String(fake.calls[0].body))).toEqual({ version: '2.0.0', channel: 'beta', notes: 'Faster' });
    expect(fake.calls[0].headers['idempotency-key']).toBe('k-1');
  });

  it('create always carries an Idempotency-Key, so its retry after a 503 creates nothing twice', async () => {
    const fake = fakeFetch(unavailable(), json(201, release));
    await expect(vendor(fake.fetch).releases.create(PROD, { version: '2.0.0' })).resolves.toEqual(release);
    expect(fake.calls).toHaveLength(2);
    expect(fake.calls[0].headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(fake.calls[1].headers['idempotency-key']).toBe(fake.calls[0].headers['idempotency-key']);
  });

  it('list filters by channel and status and walks every page', async () => {
    const fake = fakeFetch(
      json(200, { data: [release], has_more: true, next_cursor: REL }),
      json(200, { data: [{ ...release, id: 'rel_2' }], has_more: false, next_cursor: null }),
    );
    const ids: string[] = [];
    for await (const r of vendor(fake.fetch).releases.list(PROD, { channel: 'beta', status: 'published', limit: 1 }))
      ids.push(r.id);
    expect(ids).toEqual([REL, 'rel_2']);
    expect(fake.calls.map((c) => c.url)).toEqual([
      `${BASE}/api/v1/products/${PROD}/releases?channel=beta&status=published&limit=1`,
      `${BASE}/api/v1/products/${PROD}/releases?channel=beta&status=published&limit=1&starting_after=${REL}`,
    ]);
  });

  it('uploadArtifact PUTs the bytes with the target in the query and the file name percent-encoded', async () => {
    const fake = fakeFetch(json(201, artifact));
    const bytes = new TextEncoder().encode('abc');
    const client = vendor(fake.fetch);
    await expect(
      client.releases.uploadArtifact(REL, FILENAME, bytes, { platform: 'macos', arch: 'universal', signature: 'c2ln' }),
    ).resolves.toEqual(artifact);
    expect(fake.calls[0]).toMatchObject({
      method: 'PUT',
      url: `${BASE}/api/v1/releases/${REL}/artifacts/${ENCODED}?platform=macos&arch=universal`,
      headers: {
        authorization: 'Bearer lk_full_x',
        'content-type': 'application/octet-stream',
        'x-artifact-signature': 'c2ln',
      },
    });
    expect(fake.calls[0].body).toBe(bytes);
    expect(fake.calls[0].headers).not.toHaveProperty('idempotency-key');
  });

  it('bytes are sent again after a 503; a stream, spent by its first try, is not', async () => {
    const bytes = fakeFetch(unavailable(), json(200, artifact));
    await vendor(bytes.fetch).releases.uploadArtifact(REL, 'a.zip', new Uint8Array([1]), {
      platform: 'any',
      arch: 'any',
    });
    expect(bytes.calls).toHaveLength(2);
    const streamed = fakeFetch(unavailable(), json(200, artifact));
    const err = await vendor(streamed.fetch)
      .releases.uploadArtifact(REL, 'a.zip', Readable.from([Buffer.from('a')]), { platform: 'any', arch: 'any' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LicensingError);
    expect(err).toMatchObject({ status: 503 });
    expect(streamed.calls).toHaveLength(1);
  });

  it('refuses bad arguments before sending anything', async () => {
    const fake = fakeFetch(json(200, artifact));
    const releases = vendor(fake.fetch).releases;
    const target = { platform: 'linux', arch: 'x86_64' } as const;
    await expect(releases.uploadArtifact(REL, '..', new Uint8Array(1), target)).rejects.toThrow(/must not be "\." or/);
    await expect(releases.uploadArtifact(REL, '', new Uint8Array(1), target)).rejects.toThrow(/filename/);
    await expect(releases.uploadArtifact(REL, 'a', 'text' as never, target)).rejects.toThrow(/must be bytes/);
    await expect(releases.uploadArtifact(REL, 'a', new Uint8Array(1), { arch: 'any' } as never)).rejects.toThrow(
      /platform/,
    );
    await expect(
      releases.uploadArtifact(REL, 'a', new Uint8Array(1), { ...target, signature: 'a\nb' }),
    ).rejects.toThrow(/signature must be printable ASCII/);
    await expect(releases.downloadUrl(REL, '.')).rejects.toThrow(TypeError);
    await expect(releases.get('..')).rejects.toThrow(TypeError);
    expect(() => releases.list('')).toThrow(/product id/);
    expect(fake.calls).toHaveLength(0);
  });
});

describe('against a local server', () => {
  let server: LocalServer;
  afterEach(() => server?.close());

  it('streams a Readable: the server has its first bytes before the rest is even read, and gets it whole', async () => {
    server = await localServer((_req, res, got) =>
      sendJson(res, 201, { ...artifact, size: got.size, sha256: got.sha256 }),
    );
    const first = Buffer.alloc(64 * 1024, 1);
    const rest = Array.from({ length: 48 }, (_, i) => Buffer.alloc(64 * 1024, i));
    const firstArrived = new Promise<void>((resolve) => server.onData((bytes) => bytes >= first.length && resolve()));
    // The rest is made only once the server holds the first chunk: a client that read the body whole
    // before sending would wait here for ever.
    async function* file() {
      yield first;
      await firstArrived;
      yield* rest;
    }
    const expected = createHash('sha256')
      .update(Buffer.concat([first, ...rest]))
      .digest('hex');
    const answer = await vendor(globalThis.fetch, server.base).releases.uploadArtifact(
      REL,
      FILENAME,
      Readable.from(file()),
      { platform: 'macos', arch: 'universal', timeoutMs: 20_000 },
    );
    expect(answer).toMatchObject({ size: first.length * 49, sha256: expected });
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({
      method: 'PUT',
      url: `/api/v1/releases/${REL}/artifacts/${ENCODED}?platform=macos&arch=universal`,
      headers: { 'content-type': 'application/octet-stream', authorization: 'Bearer lk_full_x' },
    });
  });

  it('sends a web ReadableStream and a Blob whole too', async () => {
    server = await localServer((_req, res, got) =>
      sendJson(res, 200, { ...artifact, size: got.size, sha256: got.sha256 }),
    );
    const releases = vendor(globalThis.fetch, server.base).releases;
    const target = { platform: 'windows', arch: 'x86_64' } as const;
    const web = new Blob(['hello ', 'world']).stream();
    await expect(releases.uploadArtifact(REL, 'setup.exe', web, target)).resolves.toMatchObject({ size: 11 });
    await expect(releases.uploadArtifact(REL, 'setup.exe', new Blob(['abc']), target)).resolves.toMatchObject({
      size: 3,
      sha256: artifact.sha256,
    });
  });

  it('downloadUrl answers the 303 Location, made absolute, without following it', async () => {
    server = await localServer((req, res) => {
      if (req.url?.startsWith('/files/')) return sendJson(res, 200, {});
      res.writeHead(303, { location: '/files/f_1?expires=1700000300&sig=abc' }).end();
    });
    const link = await vendor(globalThis.fetch, server.base).releases.downloadUrl(REL, FILENAME);
    expect(link).toBe(`${server.base}/files/f_1?expires=1700000300&sig=abc`);
    expect(server.received.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /api/v1/releases/${REL}/artifacts/${ENCODED}`,
    ]);
    expect(server.received[0].headers.authorization).toBe('Bearer lk_full_x');
  });

  it('downloadUrl of a missing file is the API’s 404; a 200 instead of a redirect is invalid_response', async () => {
    server = await localServer((req, res) =>
      req.url?.endsWith('/missing.zip')
        ? sendJson(res, 404, {
            type: '/docs#error-not_found',
            title: 'x',
            status: 404,
            code: 'not_found',
            detail: 'no file',
          })
        : sendJson(res, 200, { not: 'a redirect' }),
    );
    const releases = vendor(globalThis.fetch, server.base).releases;
    await expect(releases.downloadUrl(REL, 'missing.zip')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(releases.downloadUrl(REL, 'a.zip')).rejects.toMatchObject({ status: 200, code: 'invalid_response' });
  });
});
