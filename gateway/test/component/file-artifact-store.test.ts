import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ArtifactStore, ArtifactTooLarge } from '../../src/artifacts/artifact-store';
import { FileArtifactStore } from '../../src/artifacts/file-store';
import { artifactStoreOf } from '../../src/artifacts/store-url';
import { bodyOf, digestOf, MiB } from './artifact-bodies';

// The default artifact store, files under DATA_DIR/artifacts, in a temporary folder: the same cases as
// the S3 store's (s3-artifact-store.test.ts), and what only a folder can get wrong: a half-written file
// (*.part) left behind, concurrent writers, a key that would leave the folder.

let dataDir: string;
let root: string;
let store: FileArtifactStore;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'licensing-test-file-store-'));
  root = join(dataDir, 'artifacts');
  store = artifactStoreOf('', dataDir) as FileArtifactStore;
  await store.ready();
});

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

let n = 0;
const newKey = () => `acc_test/rel_test/f${Date.now().toString(36)}${n++}`;

/** Every file under the store's folder, relative to it. */
const filesIn = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
const partials = () => filesIn(root).filter((f) => f.endsWith('.part'));

describe('FileArtifactStore', () => {
  it('ready() makes the folder under DATA_DIR/artifacts (the store ARTIFACT_STORE_URL="" names)', async () => {
    expect(store.kind).toBe('file');
    expect(existsSync(root)).toBe(true);
    const nested = new FileArtifactStore(join(dataDir, 'not', 'yet', 'there'));
    await nested.ready();
    expect(existsSync(join(dataDir, 'not', 'yet', 'there'))).toBe(true);
  });

  it('streams a file of several MB to disk, with its size and sha256, and reads it back', async () => {
    const body = bodyOf(12 * MiB + 12_345);
    const key = newKey();
    const stored = await store.put(key, body.stream, 64 * MiB);
    expect(stored).toEqual({ size: 12 * MiB + 12_345, sha256: body.sha256() });
    const opened = await store.open(key);
    expect(opened.size).toBe(stored.size);
    expect(await digestOf(opened.stream)).toEqual(stored);
    expect(filesIn(root)).toContain(key);
    expect(partials()).toEqual([]);
  });

  it('stores a small file and an empty one', async () => {
    for (const size of [1_000, 0]) {
      const body = bodyOf(size);
      const key = newKey();
      expect(await store.put(key, body.stream, MiB)).toEqual({ size, sha256: body.sha256() });
      expect(await digestOf((await store.open(key)).stream)).toEqual({ size, sha256: body.sha256() });
    }
  });

  it('past maxBytes: stops reading, rejects with ArtifactTooLarge, and removes the partial file', async () => {
    const big = bodyOf(40 * MiB);
    const key = newKey();
    await expect(store.put(key, big.stream, 7 * MiB)).rejects.toBeInstanceOf(ArtifactTooLarge);
    expect(big.sent).toBeLessThan(9 * MiB); // the rest was never read
    expect(filesIn(root).filter((f) => f.startsWith(key))).toEqual([]);
    expect(partials()).toEqual([]);
  });

  it('a body that fails midway rejects with its error and leaves nothing', async () => {
    for (const failAfter of [5 * MiB, 0]) {
      const key = newKey();
      await expect(store.put(key, bodyOf(20 * MiB, { failAfter }).stream, 64 * MiB)).rejects.toThrow(
        'the client went away',
      );
      expect(filesIn(root).filter((f) => f.startsWith(key))).toEqual([]);
    }
    expect(partials()).toEqual([]);
  });

  it('concurrent uploads to different keys each keep their own bytes', async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => ({ key: newKey(), body: bodyOf(MiB + i, { chunk: 16_384 }) }));
    const stored = await Promise.all(bodies.map(({ key, body }) => store.put(key, body.stream, 64 * MiB)));
    for (const [i, { key, body }] of bodies.entries()) {
      expect(stored[i]).toEqual({ size: MiB + i, sha256: body.sha256() });
      expect(await digestOf((await store.open(key)).stream)).toEqual(stored[i]);
    }
    expect(partials()).toEqual([]);
  });

  it('has no presigned URL: the gateway serves the file behind its own link', async () => {
    const key = newKey();
    await store.put(key, bodyOf(1_000).stream, MiB);
    expect(await (store as ArtifactStore).presignedUrl(key, 'app.dmg', 300)).toBeNull();
  });

  it('open of a removed or unknown key is not_found; remove is idempotent', async () => {
    const key = newKey();
    await store.put(key, bodyOf(10_000).stream, MiB);
    await store.remove(key);
    expect(filesIn(root)).not.toContain(key);
    await expect(store.open(key)).rejects.toMatchObject({ name: 'AppError', code: 'not_found' });
    await expect(store.remove(key)).resolves.toBeUndefined();
    await expect(store.open(newKey())).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses a key that is not a storage key, writing nothing outside its folder', async () => {
    for (const key of ['../escape', 'acc/../../escape', '/etc/escape', 'acc//rel', 'acc/rel/']) {
      await expect(store.put(key, bodyOf(10).stream, MiB)).rejects.toThrow('not a storage key');
      await expect(store.open(key)).rejects.toThrow('not a storage key');
    }
    expect(readdirSync(dataDir).sort()).toEqual(['artifacts', 'not']);
  });
});
