import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { AppError, newId, setLogDestination } from '@licensing/runtime';
import {
  Release,
  type AddArtifactRequest,
  type ProductServiceService,
  type RedeemUploadGrantResponse,
} from '@licensing/proto';
import type { FakeHandlers } from '@licensing/test-support';
import { eventually } from '../../../test/support/eventually';
import { filesUnder } from './artifact-bodies';
import { startGatewayOverFakes, type GatewayOverFakes } from './gateway-over-fakes';

// PUT /api/v1/uploads/{token}: the dashboard's browser uploads, over a product service faked in memory
// and the gateway's own file store (a temporary DATA_DIR). No credential: the grant is redeemed (once;
// unknown, expired or used: 404), then the upload is the artifact route's for what the grant names,
// with its refusals (413 past ARTIFACT_MAX_BYTES, 409 for a release that is no draft). The token is in
// no log line. What the product service decides of grants: services/product/test/component/upload-grants.test.ts.

const MAX = 64 * 1024;
const dataDir = join(tmpdir(), `upload-grant-routes-${randomBytes(4).toString('hex')}`);
const releases: Release[] = [];
const recorded: AddArtifactRequest[] = [];
/** The grants the fake product service would redeem, by token (gone once redeemed). */
const grants = new Map<string, RedeemUploadGrantResponse>();
const logLines: string[] = [];
let g: GatewayOverFakes;

function productFake(): Partial<FakeHandlers<typeof ProductServiceService>> {
  const find = (accountId: string, id: string) => {
    const r = releases.find((x) => x.id === id);
    if (!r || accountId !== g.account) throw AppError.notFound('release');
    return r;
  };
  return {
    redeemUploadGrant: ({ token }) => {
      const grant = grants.get(token);
      if (!grant) throw AppError.notFound('upload grant');
      grants.delete(token);
      return grant;
    },
    getRelease: ({ account_id, id }) => find(account_id, id),
    addArtifact: (req) => {
      const r = find(req.account_id, req.release_id);
      if (r.status !== 'draft') throw new AppError('conflict', 'not a draft');
      recorded.push(req);
      r.artifacts = [...r.artifacts, { ...req.artifact!, created_at: new Date().toISOString() }];
      return { release: r, replaced_storage_key: '' };
    },
  };
}

/** A release of the account in this state, and a grant for a file of it (a token of letters and digits only). */
function grantOn(status = 'draft', fields: Partial<RedeemUploadGrantResponse> = {}) {
  const release = Release.fromPartial({
    id: newId('rel'),
    product_id: newId('prod'),
    version: '1.0.0',
    channel: 'stable',
    status,
    created_at: new Date().toISOString(),
  });
  releases.push(release);
  const token = randomBytes(32).toString('hex').slice(0, 43);
  grants.set(token, {
    account_id: g.account,
    release_id: release.id,
    filename: 'Editor Setup.exe',
    platform: 'windows',
    arch: 'x86_64',
    signature: 'minisign:abc',
    ...fields,
  });
  return { release, token };
}

beforeAll(async () => {
  // Every log line of the gateway, the access log's among them (LOG_LEVEL info turns it on).
  setLogDestination(
    new Writable({
      write(chunk, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    }),
  );
  g = await startGatewayOverFakes(
    { product: productFake() },
    { settings: { DATA_DIR: dataDir, ARTIFACT_MAX_BYTES: String(MAX), LOG_LEVEL: 'info' } },
  );
});

afterAll(async () => {
  await g?.stop();
  setLogDestination(undefined);
});

const upload = (token: string, body: Uint8Array | ReadableStream, headers: Record<string, string> = {}) =>
  fetch(`${g.url}/api/v1/uploads/${token}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);

const storedFiles = () => filesUnder(join(dataDir, 'artifacts'));

it('stores the file without a credential, recorded with what the grant names; the grant works once', async () => {
  const { release, token } = grantOn();
  const body = randomBytes(40_000);
  const res = await upload(token, body);
  expect(res.status).toBe(201);
  const sha256 = createHash('sha256').update(body).digest('hex');
  expect(await res.json()).toMatchObject({
    filename: 'Editor Setup.exe',
    platform: 'windows',
    arch: 'x86_64',
    size: body.length,
    sha256,
    signature: 'minisign:abc',
    downloads: 0,
  });
  expect(recorded.at(-1)).toMatchObject({
    account_id: g.account,
    release_id: release.id,
    artifact: { filename: 'Editor Setup.exe', platform: 'windows', arch: 'x86_64', signature: 'minisign:abc', sha256 },
  });
  expect(recorded.at(-1)!.artifact!.storage_key).toMatch(new RegExp(`^${g.account}/${release.id}/`));
  expect(storedFiles()).toHaveLength(1);
  const again = await upload(token, body);
  expect(again.status).toBe(404);
  expect(storedFiles()).toHaveLength(1);
});

it('answers 404 for a token no grant has, before keeping anything', async () => {
  const before = storedFiles().length;
  for (const token of ['A'.repeat(43), 'not-a-grant'])
    expect(await (await upload(token, Buffer.from('data'))).json()).toMatchObject({ status: 404, code: 'not_found' });
  expect(storedFiles().length).toBe(before);
});

it('writes no token in any log line: the access log names the route by its template', async () => {
  const { token } = grantOn();
  expect((await upload(token, Buffer.from('logged?'))).status).toBe(201);
  expect((await upload(token, Buffer.from('logged?'))).status).toBe(404);
  // A request's line is written once its answer is out, which the client may see first.
  const uploads = await eventually(() => {
    const lines = logLines.filter((l) => l.includes('"url":"/api/v1/uploads/'));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    return lines;
  });
  for (const line of uploads) expect(JSON.parse(line)).toMatchObject({ url: '/api/v1/uploads/:token' });
  expect(logLines.filter((l) => l.includes(token))).toEqual([]);
});

// Last: a refused upload's connection is read on and closed after its answer (http/refused-upload.ts).
it('refuses a release that is no draft (409) and a file past ARTIFACT_MAX_BYTES (413), keeping nothing', async () => {
  const before = storedFiles().length;
  const published = await upload(grantOn('published').token, Buffer.from('x'));
  expect(published.status).toBe(409);
  const tooBig = await upload(grantOn().token, randomBytes(MAX + 1));
  expect(tooBig.status).toBe(413);
  expect((await tooBig.json()).code).toBe('payload_too_large');
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent > MAX * 2) return controller.close();
      sent += 16 * 1024;
      controller.enqueue(randomBytes(16 * 1024));
    },
  });
  const streamed = await upload(grantOn().token, stream);
  expect(streamed.status).toBe(413);
  expect(storedFiles().length).toBe(before);
});
