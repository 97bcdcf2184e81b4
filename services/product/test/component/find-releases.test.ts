import { FindReleasesRequest, releaseChannels, type ReleaseGrant } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import { testTopology } from '../../../../test/support/stack';
import { productOfNewAccount, releaseWith, type ProductRef } from './release-fixtures';
import { useProductService } from './running-product';

// What the update feeds offer, from the product service alone over gRPC as the gateway calls it,
// against real FerretDB and NATS: FindReleases answers the published releases a licence's grant
// covers (its channels, its entitlements, published before its expiry under maintain_access), on the
// channels asked for, newer than a version, with a file for a machine ('any' and 'universal' files fit
// more), newest version first and at most a limit; drafts and yanked releases never.

const t = testTopology();
const run = useProductService(t);
const api = () => run.products.call;

/** Every channel and the entitlement the pro release needs: a grant that withholds nothing. */
const FULL: ReleaseGrant = { channels: [...releaseChannels], entitlements: ['pro'], published_before: '' };

let of: ProductRef;

beforeAll(async () => {
  of = await productOfNewAccount(run);
  // Created out of version order, so the order answered is the service's own.
  await releaseWith(run, of, '1.9.0', { files: [['any', 'any']] });
  await releaseWith(run, of, '1.0.0', { published_at: '2020-01-01T00:00:00Z' });
  await releaseWith(run, of, '2.0.0', { files: [['macos', 'universal']] });
  await releaseWith(run, of, '2.1.0-beta.1', { files: [['linux', 'x86_64']] });
  await releaseWith(run, of, '1.10.0', {
    files: [
      ['windows', 'x86_64'],
      ['linux', 'aarch64'],
    ],
  });
  await releaseWith(run, of, '2.0.1', { entitlements: ['pro'], files: [['windows', 'x86_64']] });
  await releaseWith(run, of, '2.1.0-alpha.1', { files: [['macos', 'aarch64']] });
  await releaseWith(run, of, '3.0.0', { state: 'draft', files: [['any', 'any']] });
  await releaseWith(run, of, '1.11.0', { state: 'yanked', files: [['any', 'any']] });
});

const find = (fields: Partial<FindReleasesRequest>, product: ProductRef = of) =>
  api().findReleases(FindReleasesRequest.fromPartial({ ...product, grant: FULL, limit: 100, ...fields }));

const versions = async (fields: Partial<FindReleasesRequest>) => (await find(fields)).data.map((r) => r.version);

describe('finding the releases to offer', () => {
  it('answers the published stable releases newest version first, whole, never a draft or a yanked one', async () => {
    const found = await find({});
    expect(found.data.map((r) => r.version)).toEqual(['2.0.1', '2.0.0', '1.10.0', '1.9.0', '1.0.0']);
    expect(found.page).toEqual({ has_more: false, next_cursor: '' });
    expect(found.data[0]).toEqual(await api().getRelease({ account_id: of.account_id, id: found.data[0].id }));
    expect(found.data[0].artifacts[0].storage_key).toMatch(/^artifacts\//);
  });

  it('answers at most the limit, the newest first; a limit of 0 is 1', async () => {
    expect(await versions({ limit: 2 })).toEqual(['2.0.1', '2.0.0']);
    expect(await versions({ limit: 0 })).toEqual(['2.0.1']);
  });

  it('offers the channel asked for and every more stable one, within the channels of the grant', async () => {
    expect(await versions({ channel: 'stable' })).toEqual(await versions({}));
    expect(await versions({ channel: 'beta' })).toEqual(['2.1.0-beta.1', '2.0.1', '2.0.0', '1.10.0', '1.9.0', '1.0.0']);
    expect(await versions({ channel: 'alpha', limit: 3 })).toEqual(['2.1.0-beta.1', '2.1.0-alpha.1', '2.0.1']);
    expect(await versions({ channel: 'dev', limit: 3 })).toEqual(['2.1.0-beta.1', '2.1.0-alpha.1', '2.0.1']);
    const stableOnly = { ...FULL, channels: ['stable'] };
    expect(await versions({ channel: 'dev', grant: stableOnly, limit: 1 })).toEqual(['2.0.1']);
    const alphaOnly = { ...FULL, channels: ['alpha'] };
    expect(await versions({ channel: 'dev', grant: alphaOnly })).toEqual(['2.1.0-alpha.1']);
    expect(await versions({ channel: 'beta', grant: alphaOnly })).toEqual([]);
  });

  it('leaves out releases needing an entitlement the grant lacks', async () => {
    expect(await versions({ grant: { ...FULL, entitlements: [] }, limit: 2 })).toEqual(['2.0.0', '1.10.0']);
  });

  it('offers only releases published before the grant says (an expired licence keeping what it had)', async () => {
    expect(await versions({ grant: { ...FULL, published_before: '2021-01-01T00:00:00Z' } })).toEqual(['1.0.0']);
    expect(await versions({ grant: { ...FULL, published_before: '2020-01-01T00:00:00Z' } })).toEqual([]);
  });

  it('offers only versions of higher precedence than newer_than (build metadata aside)', async () => {
    expect(await versions({ newer_than: '1.9.0' })).toEqual(['2.0.1', '2.0.0', '1.10.0']);
    expect(await versions({ newer_than: '2.0.0+build.7' })).toEqual(['2.0.1']);
    expect(await versions({ newer_than: '2.0.1-rc.1' })).toEqual(['2.0.1']);
    expect(await versions({ newer_than: '2.0.1' })).toEqual([]);
    expect(await versions({ newer_than: '2.0.1', channel: 'beta' })).toEqual(['2.1.0-beta.1']);
  });

  it("offers only releases with a file for the machine: 'any' platform files fit all, 'any' and 'universal' arch files too", async () => {
    expect(await versions({ platform: 'windows' })).toEqual(['2.0.1', '1.10.0', '1.9.0']);
    expect(await versions({ platform: 'macos', arch: 'x86_64' })).toEqual(['2.0.0', '1.9.0']);
    expect(await versions({ platform: 'linux', arch: 'aarch64' })).toEqual(['1.10.0', '1.9.0']);
    expect(await versions({ platform: 'linux', arch: 'x86_64', channel: 'beta' })).toEqual(['2.1.0-beta.1', '1.9.0']);
    expect(await versions({ arch: 'aarch64', channel: 'alpha' })).toEqual([
      '2.1.0-alpha.1',
      '2.0.0',
      '1.10.0',
      '1.9.0',
    ]);
    expect(await versions({ platform: 'windows', arch: 'aarch64' })).toEqual(['1.9.0']);
  });

  it('refuses a condition outside its vocabulary or range (400, naming it)', async () => {
    const cases: [Partial<FindReleasesRequest>, string][] = [
      [{ platform: 'beos' }, 'platform'],
      [{ arch: 'ppc64' }, 'arch'],
      [{ channel: 'nightly' }, 'channel'],
      [{ newer_than: 'v1.0.0' }, 'newer_than'],
      [{ newer_than: '1.0' }, 'newer_than'],
      [{ limit: 101 }, 'limit'],
      [{ limit: -1 }, 'limit'],
      [{ grant: { ...FULL, published_before: 'last tuesday' } }, 'grant.published_before'],
    ];
    for (const [fields, field] of cases)
      await expect(find(fields)).rejects.toMatchObject({
        code: 'invalid_request',
        fieldErrors: [expect.objectContaining({ field })],
      });
  });

  it("answers not found (404) for another account's product, and nothing for a product without releases", async () => {
    await expect(find({}, { ...of, account_id: newId('acct') })).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('product not found'),
    });
    expect((await find({}, await productOfNewAccount(run))).data).toEqual([]);
  });
});
