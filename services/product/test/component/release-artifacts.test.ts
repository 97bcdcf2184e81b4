import {
  ARTIFACTS_PER_RELEASE_MAX,
  ARTIFACT_SIGNATURE_MAX_LENGTH,
  type Artifact,
  type ReleaseData,
} from '@licensing/proto';
import { newId } from '@licensing/runtime';
import { testTopology } from '../../../../test/support/stack';
import { ReleaseStore, type ReleaseDoc } from '../../src/store/releases';
import { file, productOfNewAccount, releaseWith, type ProductRef } from './release-fixtures';
import { useProductService } from './running-product';

// A release's files in the product service alone, over gRPC as the gateway calls it, against real
// FerretDB and NATS: the gateway stores a file and records it with AddArtifact (a draft's only; one of
// the same name replaced, its stored file named for removal; bad records refused naming the field;
// at most ARTIFACTS_PER_RELEASE_MAX), then counts each download handed out with RecordDownload.

const t = testTopology();
const run = useProductService(t);
const api = () => run.products.call;

const add = (of: ProductRef, releaseId: string, artifact: Artifact | undefined) =>
  api().addArtifact({ account_id: of.account_id, release_id: releaseId, artifact });

const download = (of: ProductRef, releaseId: string, filename: string) =>
  api().recordDownload({ account_id: of.account_id, release_id: releaseId, filename });

describe('adding a file to a release', () => {
  it('records it on a draft: downloads from 0, created now, the hash in lowercase, read back the same', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const before = Date.now();
    const sent = file('Editor-1.0.0.dmg', 'macos', 'universal', {
      size: 52_428_800,
      sha256: 'AB'.repeat(32),
      signature: 'untrusted comment: minisign\nRWQ...',
      downloads: 99,
      created_at: '2001-01-01T00:00:00Z',
    });
    const answer = await add(of, draft.id, sent);
    expect(answer.replaced_storage_key).toBe('');
    expect(answer.release).toEqual({
      ...draft,
      artifacts: [{ ...sent, sha256: 'ab'.repeat(32), downloads: 0, created_at: expect.any(String) }],
    });
    expect(Date.parse(answer.release!.artifacts[0].created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(await api().getRelease({ account_id: of.account_id, id: draft.id })).toEqual(answer.release);
  });

  it('adds other names after it, and replaces one of the same name in its place, naming its stored file', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const mac = file('Editor.dmg', 'macos', 'universal');
    const win = file('Editor.msi', 'windows', 'x86_64');
    await add(of, draft.id, mac);
    await add(of, draft.id, win);
    expect(await download(of, draft.id, 'Editor.dmg')).toEqual({ downloads: 1 });
    const again = file('Editor.dmg', 'macos', 'aarch64', { size: 7 });
    const answer = await add(of, draft.id, again);
    expect(answer.replaced_storage_key).toBe(mac.storage_key);
    expect(answer.release!.artifacts.map((a) => [a.filename, a.arch, a.size, a.storage_key, a.downloads])).toEqual([
      ['Editor.dmg', 'aarch64', 7, again.storage_key, 0],
      ['Editor.msi', 'x86_64', win.size, win.storage_key, 0],
    ]);
    expect((await api().getRelease({ account_id: of.account_id, id: draft.id })).artifacts).toEqual(
      answer.release!.artifacts,
    );
    // A re-upload the gateway stored under the same key leaves no file to remove.
    const sameKey = await add(of, draft.id, { ...again, size: 8 });
    expect(sameKey.replaced_storage_key).toBe('');
    expect(sameKey.release!.artifacts[0].size).toBe(8);
  });

  it('refuses a published or yanked release (409), leaving its files as they were', async () => {
    const of = await productOfNewAccount(run);
    for (const state of ['published', 'yanked'] as const) {
      const release = await releaseWith(run, of, state === 'published' ? '1.0.0' : '2.0.0', {
        state,
        files: [['linux', 'x86_64']],
      });
      await expect(add(of, release.id, file('late.tar.gz'))).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining(`this release is ${state}`),
      });
      expect(await api().getRelease({ account_id: of.account_id, id: release.id })).toEqual(release);
    }
  });

  it('announces the files in release.published as the API shows them: no storage key', async () => {
    const of = await productOfNewAccount(run);
    const release = await releaseWith(run, of, '1.0.0', { files: [['linux', 'x86_64']] });
    const event = await run.events.waitFor(
      (e) => e.type === 'release.published' && (e.data as { release: { id: string } }).release.id === release.id,
    );
    const [sent] = (event.data as { release: ReleaseData }).release.artifacts;
    const { storage_key: _key, ...shown } = release.artifacts[0];
    expect(sent).toEqual({ ...shown, signature: null });
    expect(JSON.stringify(event)).not.toContain(release.artifacts[0].storage_key);
  });

  it("answers not found (404) for another account's release, or one that does not exist", async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const other = { account_id: newId('acct'), product_id: of.product_id };
    await expect(add(other, draft.id, file('a.zip'))).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('release not found'),
    });
    await expect(add(of, 'rel_01J0000000000000000000000Z', file('a.zip'))).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await api().getRelease({ account_id: of.account_id, id: draft.id })).artifacts).toEqual([]);
  });

  it('refuses a bad record naming the field, and writes nothing', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const cases: [Artifact | undefined, string][] = [
      [undefined, 'artifact'],
      [file(''), 'artifact.filename'],
      [file('../escape.zip'), 'artifact.filename'],
      [file('dir/app.zip'), 'artifact.filename'],
      [file('dir\\app.zip'), 'artifact.filename'],
      [file('..'), 'artifact.filename'],
      [file('bell\u0007.zip'), 'artifact.filename'],
      [file(`${'é'.repeat(128)}.zip`), 'artifact.filename'],
      [file('a.zip', 'beos'), 'artifact.platform'],
      [file('a.zip', 'linux', 'ppc64'), 'artifact.arch'],
      [file('a.zip', 'linux', 'x86_64', { size: -1 }), 'artifact.size'],
      [file('a.zip', 'linux', 'x86_64', { sha256: 'abc' }), 'artifact.sha256'],
      [file('a.zip', 'linux', 'x86_64', { sha256: 'g'.repeat(64) }), 'artifact.sha256'],
      [file('a.zip', 'linux', 'x86_64', { sha256: 'a'.repeat(65) }), 'artifact.sha256'],
      [
        file('a.zip', 'linux', 'x86_64', { signature: 's'.repeat(ARTIFACT_SIGNATURE_MAX_LENGTH + 1) }),
        'artifact.signature',
      ],
      [file('a.zip', 'linux', 'x86_64', { storage_key: '' }), 'artifact.storage_key'],
    ];
    for (const [artifact, field] of cases)
      await expect(add(of, draft.id, artifact)).rejects.toMatchObject({
        code: 'invalid_request',
        fieldErrors: [expect.objectContaining({ field })],
      });
    expect((await api().getRelease({ account_id: of.account_id, id: draft.id })).artifacts).toEqual([]);
  });

  it(`holds at most ${ARTIFACTS_PER_RELEASE_MAX} files (409 for one more), each still replaceable`, async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    for (let i = 0; i < ARTIFACTS_PER_RELEASE_MAX; i++) await add(of, draft.id, file(`part-${i}.bin`));
    await expect(add(of, draft.id, file('one-more.bin'))).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining(`${ARTIFACTS_PER_RELEASE_MAX} files`),
    });
    const replaced = await add(of, draft.id, file('part-7.bin', 'linux'));
    expect(replaced.release!.artifacts).toHaveLength(ARTIFACTS_PER_RELEASE_MAX);
    expect(replaced.release!.artifacts[7].platform).toBe('linux');
    expect(replaced.replaced_storage_key).toMatch(/^artifacts\/file_/);
  });
});

describe("the store's conditional writes", () => {
  const store = () => new ReleaseStore(run.service.ctx.db.model<ReleaseDoc>('Release'));

  it('write a list of files only over the list they read, on a draft', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft', files: [['linux', 'x86_64']] });
    const read = (await store().find(of.account_id, draft.id))!;
    const mine = { ...read.artifacts[0], filename: 'mine.bin', storage_key: 'artifacts/mine' };
    // Another upload lands first: a replacement (same count, another key), then one more file.
    await add(of, draft.id, file(read.artifacts[0].filename, 'linux', 'x86_64'));
    expect(await store().setArtifacts(read, [...read.artifacts, mine])).toBe(false);
    const now = (await store().find(of.account_id, draft.id))!;
    await add(of, draft.id, file('other.bin'));
    expect(await store().setArtifacts(now, [...now.artifacts, mine])).toBe(false);
    const latest = (await store().find(of.account_id, draft.id))!;
    expect(latest.artifacts.map((a) => a.filename)).toEqual([read.artifacts[0].filename, 'other.bin']);
    // Published meanwhile: nothing written either.
    await api().publishRelease({ account_id: of.account_id, id: draft.id });
    expect(await store().setArtifacts(latest, [...latest.artifacts, mine])).toBe(false);
    expect((await store().find(of.account_id, draft.id))!.artifacts).toEqual(latest.artifacts);
  });

  it('count a download only where the file still is', async () => {
    const of = await productOfNewAccount(run);
    const release = await releaseWith(run, of, '1.0.0', {
      files: [
        ['linux', 'x86_64'],
        ['macos', 'universal'],
      ],
    });
    const [first, second] = release.artifacts.map((a) => a.filename);
    expect(await store().countDownload(of.account_id, release.id, 0, second)).toBeNull();
    expect(await store().countDownload(of.account_id, release.id, 2, second)).toBeNull();
    expect(await store().countDownload(of.account_id, release.id, 1, second)).toBe(1);
    expect(await store().countDownload(newId('acct'), release.id, 0, first)).toBeNull();
    const read = await api().getRelease({ account_id: of.account_id, id: release.id });
    expect(read.artifacts.map((a) => a.downloads)).toEqual([0, 1]);
  });
});

describe('counting downloads', () => {
  it("counts each download of a file, answering its count, and only that file's", async () => {
    const of = await productOfNewAccount(run);
    const release = await releaseWith(run, of, '1.0.0', {
      files: [
        ['macos', 'universal'],
        ['windows', 'x86_64'],
      ],
    });
    const [mac, win] = release.artifacts.map((a) => a.filename);
    expect(await download(of, release.id, win)).toEqual({ downloads: 1 });
    expect(await download(of, release.id, win)).toEqual({ downloads: 2 });
    expect(await download(of, release.id, mac)).toEqual({ downloads: 1 });
    expect(await download(of, release.id, win)).toEqual({ downloads: 3 });
    const read = await api().getRelease({ account_id: of.account_id, id: release.id });
    expect(read.artifacts.map((a) => [a.filename, a.downloads])).toEqual([
      [mac, 1],
      [win, 3],
    ]);
  });

  it('answers 0 for a file, a release or an account that has no such file, counting nothing', async () => {
    const of = await productOfNewAccount(run);
    const release = await releaseWith(run, of, '1.0.0', { files: [['linux', 'x86_64']] });
    const name = release.artifacts[0].filename;
    expect(await download(of, release.id, 'missing.bin')).toEqual({ downloads: 0 });
    expect(await download(of, 'rel_01J0000000000000000000000Z', name)).toEqual({ downloads: 0 });
    expect(await download({ ...of, account_id: newId('acct') }, release.id, name)).toEqual({ downloads: 0 });
    expect((await api().getRelease({ account_id: of.account_id, id: release.id })).artifacts[0].downloads).toBe(0);
  });

  it('keeps a count whole under downloads at the same moment', async () => {
    const of = await productOfNewAccount(run);
    const release = await releaseWith(run, of, '1.0.0', { files: [['linux', 'x86_64']] });
    const name = release.artifacts[0].filename;
    const answers = await Promise.all([download(of, release.id, name), download(of, release.id, name)]);
    // MongoDB counts both; FerretDB 1.x may count two at the same moment as one (its $inc is a
    // read-modify-write). Either way the stored count is one a caller was answered.
    const stored = (await api().getRelease({ account_id: of.account_id, id: release.id })).artifacts[0].downloads;
    for (const a of answers) expect([1, 2]).toContain(a.downloads);
    expect(stored).toBe(Math.max(...answers.map((a) => a.downloads)));
    expect(await download(of, release.id, name)).toEqual({ downloads: stored + 1 });
  });
});
