import { RELEASE_ENTITLEMENTS_MAX, RELEASE_NOTES_MAX_LENGTH, RELEASE_VERSION_MAX_LENGTH } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import {
  compareVersions,
  defaultChannel,
  newestFirst,
  parseVersion,
  versionKey,
  type Version,
} from '../../src/domain/release-version';
import { checkReleaseInput, checkTime, publishing, yanking, checkDeletable } from '../../src/domain/release';

// Semantic Versioning 2.0.0 as the product service reads a release's version: what parses, how two
// versions compare, which channel a pre-release tag implies, which versions are the same version;
// and the rules of a release's fields and states. No store.

const v = (text: string): Version => {
  const parsed = parseVersion(text);
  if (!parsed) throw new Error(`${text} should parse`);
  return parsed;
};

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
};

describe('a version', () => {
  it('parses into major, minor, patch, pre-release and build identifiers', () => {
    expect(parseVersion('1.2.3')).toEqual({ core: ['1', '2', '3'], prerelease: [], build: [] });
    expect(parseVersion('10.20.30-rc.1+build.5.sha-9f')).toEqual({
      core: ['10', '20', '30'],
      prerelease: ['rc', '1'],
      build: ['build', '5', 'sha-9f'],
    });
    expect(parseVersion('1.0.0-0A.is.legal')?.prerelease).toEqual(['0A', 'is', 'legal']);
    expect(parseVersion('99999999999999999999999.0.0')?.core[0]).toBe('99999999999999999999999');
  });

  it.each([
    '1.0',
    '1',
    '01.0.0',
    '1.01.0',
    '1.0.01',
    '1.0.0-',
    '1.0.0+',
    '1.0.0-01',
    '1.0.0-beta..1',
    '1.0.0-beta_1',
    'v1.0.0',
    ' 1.0.0',
    '1.0.0 ',
    '1.0.0-α',
    '',
  ])('%p is no Semantic Versioning 2.0.0 version', (text) => {
    expect(parseVersion(text)).toBeUndefined();
  });

  it('compares by precedence: the example list of semver.org, item 11', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
    ];
    for (let i = 0; i < ordered.length - 1; i++) {
      expect([ordered[i], compareVersions(v(ordered[i]), v(ordered[i + 1]))]).toEqual([ordered[i], -1]);
      expect(compareVersions(v(ordered[i + 1]), v(ordered[i]))).toBe(1);
    }
    const shuffled = [3, 7, 0, 5, 1, 6, 2, 4].map((i) => ordered[i]);
    expect(newestFirst(shuffled.map((version) => ({ version }))).map((r) => r.version)).toEqual([...ordered].reverse());
  });

  it('compares major, minor and patch numerically (any size), then ignores build metadata', () => {
    expect(compareVersions(v('1.0.0'), v('2.0.0'))).toBe(-1);
    expect(compareVersions(v('2.0.0'), v('2.1.0'))).toBe(-1);
    expect(compareVersions(v('2.1.0'), v('2.1.1'))).toBe(-1);
    expect(compareVersions(v('1.9.0'), v('1.10.0'))).toBe(-1);
    expect(compareVersions(v('1.0.10'), v('1.0.9'))).toBe(1);
    expect(compareVersions(v('99999999999999999999.0.0'), v('100000000000000000000.0.0'))).toBe(-1);
    expect(compareVersions(v('1.0.0-beta.9'), v('1.0.0-beta.10'))).toBe(-1);
    // Numeric identifiers below alphanumeric ones; alphanumeric ones in ASCII order.
    expect(compareVersions(v('1.0.0-1'), v('1.0.0-alpha'))).toBe(-1);
    expect(compareVersions(v('1.0.0-Beta'), v('1.0.0-alpha'))).toBe(-1);
    expect(compareVersions(v('1.0.0+build.1'), v('1.0.0+build.2'))).toBe(0);
    expect(compareVersions(v('1.0.0-rc.1+a'), v('1.0.0-rc.1'))).toBe(0);
  });

  it('is one version with any other of equal precedence: the same key, build metadata left out', () => {
    expect(versionKey(v('1.0.0+build1'))).toBe(versionKey(v('1.0.0+build2')));
    expect(versionKey(v('1.0.0+build1'))).toBe('1.0.0');
    expect(versionKey(v('1.0.0-rc.1+exp.sha.5114f85'))).toBe('1.0.0-rc.1');
    expect(versionKey(v('1.0.0-rc.1'))).not.toBe(versionKey(v('1.0.0-rc.2')));
    expect(versionKey(v('1.0.0-rc.1'))).not.toBe(versionKey(v('1.0.0')));
  });

  it.each([
    ['1.0.0', 'stable'],
    ['1.0.0+build.1', 'stable'],
    ['1.0.0-beta.1', 'beta'],
    ['1.0.0-beta', 'beta'],
    ['2.0.0-rc.1', 'beta'],
    ['2.0.0-RC.2', 'beta'],
    ['1.0.0-alpha', 'alpha'],
    ['1.0.0-alpha.beta', 'alpha'],
    ['1.0.0-dev.3', 'dev'],
    ['1.0.0-preview.1', 'stable'],
    ['1.0.0-0.3.7', 'stable'],
    ['1.0.0-betamax', 'stable'],
  ])('%s is on the %s channel unless another is given', (text, channel) => {
    expect(defaultChannel(v(text))).toBe(channel);
  });
});

describe("a new release's fields", () => {
  const fields = (over: Record<string, unknown> = {}) => ({
    version: '1.0.0',
    channel: undefined,
    notes: '',
    entitlements: [],
    published_at: undefined,
    ...over,
  });

  it('take the version trimmed, the channel from it, and no publication time', () => {
    expect(checkReleaseInput(fields({ version: ' 2.0.0-rc.1+b7 ' }))).toEqual({
      version: '2.0.0-rc.1+b7',
      version_key: '2.0.0-rc.1',
      channel: 'beta',
      notes: '',
      entitlements: [],
      published_at: null,
    });
    expect(checkReleaseInput(fields({ version: '2.0.0-rc.1', channel: 'dev' })).channel).toBe('dev');
  });

  it('take the limits of proto/rules and refuse one past them, naming the field', () => {
    const longest = `1.0.0-${'a'.repeat(RELEASE_VERSION_MAX_LENGTH - 6)}`;
    expect(checkReleaseInput(fields({ version: longest })).version).toBe(longest);
    expect(refusal(() => checkReleaseInput(fields({ version: `${longest}a` }))).fieldErrors[0].field).toBe('version');
    const notes = 'n'.repeat(RELEASE_NOTES_MAX_LENGTH);
    expect(checkReleaseInput(fields({ notes })).notes).toBe(notes);
    expect(refusal(() => checkReleaseInput(fields({ notes: `${notes}n` }))).fieldErrors[0].field).toBe('notes');
    const codes = Array.from({ length: RELEASE_ENTITLEMENTS_MAX }, (_, i) => `code-${i}`);
    expect(checkReleaseInput(fields({ entitlements: codes })).entitlements).toEqual(codes);
    expect(refusal(() => checkReleaseInput(fields({ entitlements: [...codes, 'one-more'] }))).message).toContain(
      `at most ${RELEASE_ENTITLEMENTS_MAX}`,
    );
  });

  it.each([
    [{ version: '' }, 'version'],
    [{ version: 'v1.0.0' }, 'version'],
    [{ version: '1.0' }, 'version'],
    [{ channel: 'nightly' }, 'channel'],
    [{ channel: '' }, 'channel'],
    [{ channel: 'Stable' }, 'channel'],
    [{ entitlements: ['Bad Code'] }, 'entitlements[0]'],
    [{ entitlements: ['a', 'a'] }, 'entitlements'],
    [{ published_at: 'yesterday' }, 'published_at'],
  ])('refuse %p (400, field %s)', (over, field) => {
    const err = refusal(() => checkReleaseInput(fields(over)));
    expect([err.code, err.fieldErrors.map((f) => f.field)]).toEqual(['invalid_request', [field]]);
  });
});

describe('a publication time', () => {
  it.each([
    ['2026-05-01', '2026-05-01T00:00:00.000Z'],
    ['2026-05-01T09:30:00Z', '2026-05-01T09:30:00.000Z'],
    ['2026-05-01T09:30Z', '2026-05-01T09:30:00.000Z'],
    ['2026-05-01T11:30:00.250+02:00', '2026-05-01T09:30:00.250Z'],
    ['2026-05-01T09:30:00', '2026-05-01T09:30:00.000Z'],
    ['2024-02-29T23:59:59-01:00', '2024-03-01T00:59:59.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(checkTime('published_at', text).toISOString()).toBe(iso);
  });

  it.each([
    'yesterday',
    '2026-13-01',
    '2026-02-30',
    '2025-02-29',
    '2026-05-01T24:00:00Z',
    '2026-05-01T09:60:00Z',
    '2026-05-01T09:30:00+25:00',
    '01/05/2026',
    '1714555800',
  ])('%p is refused', (text) => {
    expect(refusal(() => checkTime('published_at', text)).fieldErrors[0].field).toBe('published_at');
  });
});

describe("a release's states", () => {
  const now = new Date('2026-05-01T12:00:00Z');
  const given = new Date('2026-04-30T08:00:00Z');
  const draft = { status: 'draft' as const, published_at: null, yanked_at: null };

  it('publishing: a draft at the time it was given, else now; a published one unchanged; a yanked one 409', () => {
    expect(publishing(draft, now)).toEqual({ status: 'published', published_at: now });
    expect(publishing({ ...draft, published_at: given }, now)).toEqual({ status: 'published', published_at: given });
    expect(publishing({ ...draft, status: 'published', published_at: given }, now)).toBeNull();
    expect(refusal(() => publishing({ ...draft, status: 'yanked', yanked_at: given }, now)).code).toBe('conflict');
  });

  it('yanking: a draft or published one now; a yanked one unchanged', () => {
    expect(yanking(draft, now)).toEqual({ status: 'yanked', yanked_at: now });
    expect(yanking({ ...draft, status: 'published', published_at: given }, now)).toEqual({
      status: 'yanked',
      yanked_at: now,
    });
    expect(yanking({ ...draft, status: 'yanked', yanked_at: given }, now)).toBeNull();
  });

  it('deleting: drafts only (409 otherwise)', () => {
    expect(() => checkDeletable(draft)).not.toThrow();
    expect(refusal(() => checkDeletable({ ...draft, status: 'published' })).code).toBe('conflict');
    expect(refusal(() => checkDeletable({ ...draft, status: 'yanked' })).code).toBe('conflict');
  });
});
