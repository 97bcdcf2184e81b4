import { FindReleasesRequest, releaseChannels, type ReleaseGrant } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import {
  FIND_RELEASES_LIMIT_MAX,
  checkOfferQuery,
  isOffered,
  offered,
  type OfferCandidate,
} from '../../src/domain/release-offer';

// What an update feed offers, as the product service chooses it from a product's releases: the
// request's conditions checked, then the grant (channels, entitlements, published before), the
// channels asked for, newer_than by Semantic Versioning precedence, a file for the machine, newest
// first, at most the limit. No store.

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
};

const FULL: ReleaseGrant = { channels: [...releaseChannels], entitlements: ['pro'], published_before: '' };

const query = (fields: Partial<FindReleasesRequest> = {}) =>
  checkOfferQuery(
    FindReleasesRequest.fromPartial({ account_id: 'acct_1', product_id: 'prod_1', grant: FULL, limit: 100, ...fields }),
  );

const release = (version: string, fields: Partial<OfferCandidate> = {}): OfferCandidate => ({
  version,
  channel: 'stable',
  status: 'published',
  entitlements: [],
  published_at: new Date('2026-01-01T00:00:00Z'),
  artifacts: [],
  ...fields,
});

describe("a FindReleases request's conditions", () => {
  it('default to the stable channel and one release; the grant narrowed to the channels asked for', () => {
    const q = query({ limit: 0, channel: '' });
    expect(q).toEqual({
      grant: { channels: ['stable'], entitlements: ['pro'], publishedBefore: null },
      newerThan: null,
      platform: '',
      arch: '',
      limit: 1,
    });
    expect(query({ channel: 'alpha' }).grant.channels).toEqual(['stable', 'beta', 'alpha']);
    expect(query({ channel: 'dev', grant: { ...FULL, channels: ['beta', 'dev'] } }).grant.channels).toEqual([
      'beta',
      'dev',
    ]);
    expect(query({ grant: undefined }).grant.channels).toEqual([]);
  });

  it('read newer_than (trimmed) as a version, and the grant time as a time', () => {
    expect(query({ newer_than: ' 1.2.3-beta.1+b ' }).newerThan).toEqual({
      core: ['1', '2', '3'],
      prerelease: ['beta', '1'],
      build: ['b'],
    });
    expect(query({ grant: { ...FULL, published_before: '2026-05-01T00:00:00Z' } }).grant.publishedBefore).toEqual(
      new Date('2026-05-01T00:00:00Z'),
    );
    expect(query({ limit: FIND_RELEASES_LIMIT_MAX }).limit).toBe(FIND_RELEASES_LIMIT_MAX);
  });

  it.each([
    [{ channel: 'nightly' }, 'channel'],
    [{ platform: 'beos' }, 'platform'],
    [{ arch: 'ppc64' }, 'arch'],
    [{ newer_than: 'v1.0.0' }, 'newer_than'],
    [{ newer_than: '1.0' }, 'newer_than'],
    [{ limit: FIND_RELEASES_LIMIT_MAX + 1 }, 'limit'],
    [{ limit: -1 }, 'limit'],
    [{ grant: { ...FULL, published_before: 'soon' } }, 'grant.published_before'],
  ] as [Partial<FindReleasesRequest>, string][])('refuse %j naming %s', (fields, field) => {
    const err = refusal(() => query(fields));
    expect([err.code, err.fieldErrors?.[0]?.field]).toEqual(['invalid_request', field]);
  });
});

describe('the releases offered', () => {
  it('are published ones only: never a draft or a yanked release', () => {
    const q = query();
    expect(isOffered(release('1.0.0'), q)).toBe(true);
    expect(isOffered(release('1.0.0', { status: 'draft', published_at: null }), q)).toBe(false);
    expect(isOffered(release('1.0.0', { status: 'yanked' }), q)).toBe(false);
  });

  it('are on a channel both asked for and granted', () => {
    const beta = release('2.0.0-beta.1', { channel: 'beta' });
    expect(isOffered(beta, query())).toBe(false);
    expect(isOffered(beta, query({ channel: 'beta' }))).toBe(true);
    expect(isOffered(beta, query({ channel: 'dev' }))).toBe(true);
    expect(isOffered(beta, query({ channel: 'dev', grant: { ...FULL, channels: ['stable', 'alpha'] } }))).toBe(false);
  });

  it('need no entitlement the grant lacks', () => {
    const pro = release('1.0.0', { entitlements: ['pro'] });
    expect(isOffered(pro, query())).toBe(true);
    expect(isOffered(pro, query({ grant: { ...FULL, entitlements: ['basic'] } }))).toBe(false);
  });

  it('were published before the grant says, when it says so', () => {
    const q = query({ grant: { ...FULL, published_before: '2026-01-01T00:00:00Z' } });
    expect(isOffered(release('1.0.0', { published_at: new Date('2025-12-31T23:59:59Z') }), q)).toBe(true);
    expect(isOffered(release('1.0.0', { published_at: new Date('2026-01-01T00:00:00Z') }), q)).toBe(false);
  });

  it('have higher precedence than newer_than (build metadata no part of it)', () => {
    const q = query({ newer_than: '1.0.0' });
    expect(isOffered(release('1.0.1'), q)).toBe(true);
    expect(isOffered(release('1.0.0+build.2'), q)).toBe(false);
    expect(isOffered(release('1.0.0-rc.1'), q)).toBe(false);
    expect(isOffered(release('0.9.0'), q)).toBe(false);
    expect(isOffered(release('1.0.0'), query({ newer_than: '1.0.0-rc.1' }))).toBe(true);
  });

  it("have a file for the machine when one is named: 'any' platform fits all, 'any' and 'universal' arch too", () => {
    const files = (...targets: [string, string][]) =>
      release('1.0.0', { artifacts: targets.map(([platform, arch]) => ({ platform, arch })) });
    const ask = (platform: string, arch: string) => query({ platform, arch });
    expect(isOffered(files(), query())).toBe(true);
    expect(isOffered(files(), ask('linux', ''))).toBe(false);
    expect(isOffered(files(['linux', 'x86_64']), ask('linux', 'x86_64'))).toBe(true);
    expect(isOffered(files(['linux', 'x86_64']), ask('linux', 'aarch64'))).toBe(false);
    expect(isOffered(files(['linux', 'x86_64']), ask('windows', ''))).toBe(false);
    expect(isOffered(files(['any', 'x86_64']), ask('windows', 'x86_64'))).toBe(true);
    expect(isOffered(files(['macos', 'universal']), ask('macos', 'aarch64'))).toBe(true);
    expect(isOffered(files(['macos', 'any']), ask('macos', 'x86_64'))).toBe(true);
    expect(isOffered(files(['macos', 'universal']), ask('', 'x86_64'))).toBe(true);
    // One file must fit both: a Windows x86_64 file and a Linux aarch64 one do not make a Windows aarch64 one.
    expect(isOffered(files(['windows', 'x86_64'], ['linux', 'aarch64']), ask('windows', 'aarch64'))).toBe(false);
  });

  it('come newest version first by precedence, at most the limit', () => {
    const all = ['1.0.0', '1.10.0', '1.9.0', '2.0.0-rc.1', '2.0.0-beta.2', '0.1.0'].map((v) =>
      release(v, { channel: v.includes('-') ? 'beta' : 'stable' }),
    );
    const versions = (fields: Partial<FindReleasesRequest>) => offered(all, query(fields)).map((r) => r.version);
    expect(versions({})).toEqual(['1.10.0', '1.9.0', '1.0.0', '0.1.0']);
    expect(versions({ channel: 'beta', limit: 3 })).toEqual(['2.0.0-rc.1', '2.0.0-beta.2', '1.10.0']);
    expect(versions({ limit: 0 })).toEqual(['1.10.0']);
  });
});
