import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { AppError, newId } from '@licensing/runtime';
import { Release, type AddArtifactRequest, type ProductServiceService } from '@licensing/proto';
import type { FakeHandlers } from '@licensing/test-support';
import { TestClock } from '../../../test/support/stack';
import { filesUnder } from './artifact-bodies';
import { startGatewayOverFakes, type GatewayOverFakes } from './gateway-over-fakes';

// Release files at the gateway, over a product service faked in memory and the gateway's own file
// store (DATA_DIR/artifacts, a temporary folder): an upload streamed, counted and hashed, recorded
// with its storage key; the refusals before a byte is kept (bad filename, platform, signature; a
// release that is not a draft; past ARTIFACT_MAX_BYTES, declared or streamed, the partial file
// removed); a download's 303 to a signed link that serves the exact bytes, then 410 once its 5
// minutes are over, and 404 for a link changed by hand. Who may download (licences, grants):
// test/e2e/releases.test.ts and proto/rules' unit tests.

const MAX = 64 * 1024;
const dataDir = join(require('node:os').tmpdir(), `artifact-routes-${randomBytes(4).toString('hex')}`);
const clock = new TestClock();
const releases: Release[] = [];
const recorded: AddArtifactRequest[] = [];
let g: GatewayOverFakes;

function productFake(account: () => string): Partial<FakeHandlers<typeof ProductServiceService>> {
  const find = (accountId: string, id: string) => {
    const r = releases.find((x) => x.id === id);
    if (!r || accountId !== account()) throw AppError.notFound('release');
    return r;
  };
  return {
    getRelease: ({ account_id, id }) => find(account_id, id),
    addArtifact: (req) => {
      const r = find(req.account_id, req.release_id);
      if (r.status !== 'draft') throw new AppError('conflict', 'not a draft');
      recorded.push(req);
      const old = r.artifacts.find((a) => a.filename === req.artifact!.filename);
      r.artifacts = [
        ...r.artifacts.filter((a) => a !== old),
        { ...req.artifact!, created_at: new Date().toISOString() },
      ];
      return { release: r, replaced_storage_key: old?.storage_key ?? '' };
    },
    recordDownload: ({ account_id, release_id, filename }) => {
      const a = find(account_id, release_id).artifacts.find((x) => x.filename === filename)!;
      a.downloads += 1;
      return { downloads: a.downloads };
    },
  };
}

const draft = (status = 'draft') => {
  const r = Release.fromPartial({
    id: newId('rel'),
    product_id: newId('prod'),
    version: '1.0.0',
    channel: 'stable',
    status,
    created_at: new Date().toISOString(),
  });
  releases.push(r);
  return r;
};

beforeAll(async () => {
  let account = '';
  g = await startGatewayOverFakes(
    { product: productFake(() => account) },
    { clock, settings: { DATA_DIR: dataDir, ARTIFACT_MAX_BYTES: String(MAX) } },
  );
  account = g.account;
});

afterAll(async () => {
  await g?.stop();
});

const put = (
  id: string,
  name: string,
  body: Uint8Array | ReadableStream,
  query = '?platform=windows&arch=x86_64',
  headers: Record<string, string> = {},
) =>
  fetch(`${g.url}/api/v1/releases/${id}/artifacts/${name}${query}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/octet-stream', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);

const storedFiles = () => filesUnder(join(dataDir, 'artifacts'));

it('stores an upload with its size and sha256, replaces one of the same name, and serves it through a signed link', async () => {
  const r = draft();
  const body = randomBytes(40_000);
  const res = await put(r.id, 'Setup%20App.exe', body, '?platform=windows&arch=x86_64', {
    'x-artifact-signature': 'minisign:abc',
  });
  expect(res.status).toBe(201);
  expect(await res.json()).toMatchObject({
    filename: 'Setup App.exe',
    platform: 'windows',
    arch: 'x86_64',
    size: body.length,
    sha256: createHash('sha256').update(body).digest('hex'),
    signature: 'minisign:abc',
    downloads: 0,
  });
  const again = await put(r.id, 'Setup%20App.exe', body.subarray(0, 100));
  expect(again.status).toBe(200);
  expect(recorded.at(-1)!.artifact!.size).toBe(100);

  const link = await fetch(`${g.url}/api/v1/releases/${r.id}/artifacts/Setup%20App.exe`, {
    headers: { authorization: `Bearer ${g.key}` },
    redirect: 'manual',
  });
  expect(link.status).toBe(303);
  const url = link.headers.get('location')!;
  expect(url).toMatch(/\/api\/v1\/downloads\//);
  const file = await fetch(url);
  expect(file.status).toBe(200);
  expect(file.headers.get('content-disposition')).toContain("filename*=UTF-8''Setup%20App.exe");
  expect(Buffer.from(await file.arrayBuffer()).equals(body.subarray(0, 100))).toBe(true);
  expect(r.artifacts[0].downloads).toBe(1);

  // A link changed by hand is no link; one past its 5 minutes is gone.
  const token = url.split('/downloads/')[1];
  expect((await fetch(url.replace(token, `${token.slice(0, -2)}AA`))).status).toBe(404);
  clock.advance(301_000);
  const late = await fetch(url);
  expect(late.status).toBe(410);
  expect(await late.json()).toMatchObject({ code: 'gone', status: 410 });
});

it('refuses bad filenames, platforms, archs and signatures before storing anything (400 naming them)', async () => {
  const r = draft();
  const before = storedFiles().length;
  const cases: [string, string, Record<string, string>, string][] = [
    ['a%2Fb.zip', '', {}, 'filename'],
    ['a%5Cb.zip', '', {}, 'filename'],
    ['x..y.zip', '', {}, 'filename'],
    ['bad%01name', '', {}, 'filename'],
    ['x'.repeat(256), '', {}, 'filename'],
    ['ok.zip', '?platform=amiga', {}, 'platform'],
    ['ok.zip', '?arch=mips', {}, 'arch'],
    ['ok.zip', '', { 'x-artifact-signature': 'x'.repeat(5000) }, 'X-Artifact-Signature'],
  ];
  for (const [name, query, headers, field] of cases) {
    const res = await put(r.id, name, Buffer.from('data'), query, headers);
    expect([res.status, name]).toEqual([400, name]);
    const body = await res.json();
    expect(JSON.stringify(body)).toContain(field);
  }
  expect(storedFiles().length).toBe(before);
});

it('refuses an upload to a published or yanked release (409) and to another account’s (404)', async () => {
  for (const status of ['published', 'yanked'])
    expect((await put(draft(status).id, 'a.zip', Buffer.from('x'))).status).toBe(409);
  expect((await put(newId('rel'), 'a.zip', Buffer.from('x'))).status).toBe(404);
});

it('refuses a file past ARTIFACT_MAX_BYTES, declared or streamed, and keeps nothing of it (413)', async () => {
  const r = draft();
  const before = storedFiles().length;
  const declared = await put(r.id, 'big.bin', randomBytes(MAX + 1));
  expect(declared.status).toBe(413);
  // Streamed without a length: refused once past the limit, the partial file removed.
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent > MAX * 2) return controller.close();
      sent += 16 * 1024;
      controller.enqueue(randomBytes(16 * 1024));
    },
  });
  const streamed = await put(r.id, 'big.bin', stream);
  expect(streamed.status).toBe(413);
  expect((await streamed.json()).code).toBe('payload_too_large');
  expect(storedFiles().filter((f) => String(f).endsWith('.part'))).toEqual([]);
  expect(storedFiles().length).toBe(before);
  expect(r.artifacts).toEqual([]);
  // The client's next upload goes through: a refused one's connection was closed, not left half-read.
  expect((await put(r.id, 'small.bin', Buffer.from('ok'))).status).toBe(201);
});
