import { ARTIFACTS_PER_RELEASE_MAX, ARTIFACT_SIGNATURE_MAX_LENGTH, Artifact } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { checkArtifactInput, checkArtifactsWritable, unusedStorageKey, withArtifact } from '../../src/domain/artifact';

// The rules of a release's files as the product service records them: what a record must hold, which
// releases take files, and what one more file does to a release's list. No store.

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
};

const fieldOf = (fn: () => unknown) => refusal(fn).fieldErrors?.[0]?.field;

const record = (fields: Partial<Artifact> = {}): Artifact =>
  Artifact.fromPartial({
    filename: 'Editor-1.0.0.dmg',
    platform: 'macos',
    arch: 'universal',
    size: 1024,
    sha256: 'a'.repeat(64),
    storage_key: 'artifacts/file_1',
    ...fields,
  });

describe("a file's record", () => {
  it('keeps what the gateway stored, the hash in lowercase; downloads and time are not taken from it', () => {
    const input = checkArtifactInput(
      record({ sha256: 'AbCd'.repeat(16), signature: 'sig', size: 0, downloads: 5, created_at: '2001-01-01' }),
    );
    expect(input).toEqual({
      filename: 'Editor-1.0.0.dmg',
      platform: 'macos',
      arch: 'universal',
      size: 0,
      sha256: 'abcd'.repeat(16),
      signature: 'sig',
      storage_key: 'artifacts/file_1',
    });
    expect(checkArtifactInput(record({ signature: 's'.repeat(ARTIFACT_SIGNATURE_MAX_LENGTH) })).signature).toHaveLength(
      ARTIFACT_SIGNATURE_MAX_LENGTH,
    );
  });

  it.each([
    [undefined, 'artifact'],
    [record({ filename: '' }), 'artifact.filename'],
    [record({ filename: '../x.dmg' }), 'artifact.filename'],
    [record({ filename: 'a/b.dmg' }), 'artifact.filename'],
    [record({ filename: 'a\\b.dmg' }), 'artifact.filename'],
    [record({ filename: '.' }), 'artifact.filename'],
    [record({ filename: 'tab\there.dmg' }), 'artifact.filename'],
    [record({ filename: `${'x'.repeat(252)}.dmg` }), 'artifact.filename'],
    [record({ platform: 'beos' }), 'artifact.platform'],
    [record({ platform: '' }), 'artifact.platform'],
    [record({ arch: 'ppc64' }), 'artifact.arch'],
    [record({ size: -1 }), 'artifact.size'],
    [record({ size: 0.5 }), 'artifact.size'],
    [record({ size: Number.MAX_SAFE_INTEGER + 2 }), 'artifact.size'],
    [record({ sha256: 'a'.repeat(63) }), 'artifact.sha256'],
    [record({ sha256: `${'a'.repeat(63)}z` }), 'artifact.sha256'],
    [record({ signature: 's'.repeat(ARTIFACT_SIGNATURE_MAX_LENGTH + 1) }), 'artifact.signature'],
    [record({ storage_key: '' }), 'artifact.storage_key'],
  ])('refuses %j naming %s', (artifact, field) => {
    expect(fieldOf(() => checkArtifactInput(artifact))).toBe(field);
  });

  it('takes a 255-byte name, and refuses one byte more (bytes, not characters)', () => {
    expect(checkArtifactInput(record({ filename: `${'x'.repeat(251)}.dmg` })).filename).toHaveLength(255);
    expect(fieldOf(() => checkArtifactInput(record({ filename: `${'é'.repeat(126)}.dmg` })))).toBe('artifact.filename');
  });
});

describe('which releases take files', () => {
  it('a draft only: published and yanked ones are refused (409)', () => {
    expect(() => checkArtifactsWritable({ status: 'draft' })).not.toThrow();
    for (const status of ['published', 'yanked'] as const) {
      const err = refusal(() => checkArtifactsWritable({ status }));
      expect([err.code, err.message]).toEqual(['conflict', expect.stringContaining(`this release is ${status}`)]);
    }
  });
});

describe("a release's list with one more file", () => {
  const f = (filename: string, storage_key = `k-${filename}`) => ({ filename, storage_key });

  it('puts a new name last, replacing nothing', () => {
    expect(withArtifact([f('a'), f('b')], f('c'))).toEqual({ artifacts: [f('a'), f('b'), f('c')], replaced: null });
    expect(withArtifact([], f('a'))).toEqual({ artifacts: [f('a')], replaced: null });
  });

  it('replaces a file of the same name where it stood, answering the one replaced', () => {
    const current = [f('a'), f('b'), f('c')];
    const { artifacts, replaced } = withArtifact(current, f('b', 'new'));
    expect(artifacts).toEqual([f('a'), f('b', 'new'), f('c')]);
    expect(replaced).toEqual(f('b'));
    expect(current).toEqual([f('a'), f('b'), f('c')]);
  });

  it(`refuses a file beyond ${ARTIFACTS_PER_RELEASE_MAX} (409), but still replaces one of a full list`, () => {
    const full = Array.from({ length: ARTIFACTS_PER_RELEASE_MAX }, (_, i) => f(`f${i}`));
    const err = refusal(() => withArtifact(full, f('one-more')));
    expect(err.code).toBe('conflict');
    expect(withArtifact(full.slice(1), f('last')).artifacts).toHaveLength(ARTIFACTS_PER_RELEASE_MAX);
    expect(withArtifact(full, f('f3', 'new')).artifacts[3]).toEqual(f('f3', 'new'));
  });

  it("names the replaced file's storage key for removal, unless none was replaced or the key is the new file's", () => {
    expect(unusedStorageKey(null, { storage_key: 'k2' })).toBe('');
    expect(unusedStorageKey({ storage_key: 'k1' }, { storage_key: 'k2' })).toBe('k1');
    expect(unusedStorageKey({ storage_key: 'k1' }, { storage_key: 'k1' })).toBe('');
  });
});
