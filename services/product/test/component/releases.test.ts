import { CreateProductRequest, CreateReleaseRequest, releaseLimits, type Release } from '@licensing/proto';
import { natsServers, newId } from '@licensing/runtime';
import { connect } from 'nats';
import { testTopology } from '../../../../test/support/stack';
import { useProductService } from './running-product';

// A product's releases in the product service alone, over gRPC as the gateway calls them, against
// real FerretDB and NATS: a draft is created (its channel from its version unless given), a version
// exists once per product, bad input is refused naming the field, everything is scoped to the
// account, a list is newest version first (Semantic Versioning precedence) with its filters and
// pages, and publish, yank and delete follow the states' rules, release.published and release.yanked
// on the stream before the answer. The REST face of these calls: gateway/test/component.

const t = testTopology();
const run = useProductService(t);
const api = () => run.products.call;
const ALL = { limit: 100, starting_after: '' };

/** A create request as the gateway sends it: absent strings empty, absent optionals undefined. */
const create = (fields: Partial<CreateReleaseRequest>, requestId?: string) =>
  api().createRelease(CreateReleaseRequest.fromPartial(fields), { requestId });

/** A new account with a product of its own. */
async function productOfNewAccount(): Promise<{ account_id: string; product_id: string }> {
  const account_id = newId('acct');
  const product = await api().createProduct(CreateProductRequest.fromPartial({ account_id, name: 'Photo Editor' }));
  return { account_id, product_id: product.id };
}

const list = (
  of: { account_id: string; product_id: string },
  filters: { channel?: string; status?: string } = {},
  page = ALL,
) => api().listReleases({ ...of, channel: filters.channel ?? '', status: filters.status ?? '', page });

const versionsOf = (releases: Release[]) => releases.map((r) => r.version);

describe('creating a release', () => {
  it('makes a draft of the product, its version trimmed, read back the same', async () => {
    const of = await productOfNewAccount();
    const created = await create({
      ...of,
      version: ' 1.4.2 ',
      notes: 'Faster export.',
      entitlements: ['pro', 'export.pdf'],
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^rel_[0-9A-Z]{26}$/),
      product_id: of.product_id,
      version: '1.4.2',
      channel: 'stable',
      status: 'draft',
      notes: 'Faster export.',
      published_at: '',
      entitlements: ['pro', 'export.pdf'],
      artifacts: [],
      created_at: expect.any(String),
      yanked_at: '',
    });
    expect(await api().getRelease({ account_id: of.account_id, id: created.id })).toEqual(created);
  });

  it.each([
    ['1.0.0-beta.1', 'beta'],
    ['2.0.0-rc.1', 'beta'],
    ['1.0.0-alpha', 'alpha'],
    ['1.0.0-dev.3', 'dev'],
    ['1.0.0-preview', 'stable'],
    ['1.0.0+build.9', 'stable'],
  ])('puts %s on the %s channel unless one is given', async (version, channel) => {
    const of = await productOfNewAccount();
    expect((await create({ ...of, version })).channel).toBe(channel);
    expect((await create({ ...of, version: '3.0.0-beta.1', channel: 'stable' })).channel).toBe('stable');
  });

  it('keeps a version once per product (409), build metadata aside; another product may have it', async () => {
    const of = await productOfNewAccount();
    await create({ ...of, version: '1.0.0+build1' });
    for (const version of ['1.0.0+build1', '1.0.0+build2', '1.0.0', ' 1.0.0 '])
      await expect(create({ ...of, version })).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('already has version 1.0.0'),
      });
    const other = await api().createProduct(
      CreateProductRequest.fromPartial({ account_id: of.account_id, name: 'Other' }),
    );
    expect((await create({ account_id: of.account_id, product_id: other.id, version: '1.0.0' })).version).toBe('1.0.0');
    expect(versionsOf((await list(of)).data)).toEqual(['1.0.0+build1']);
  });

  it('refuses bad input naming the field, and writes nothing', async () => {
    const of = await productOfNewAccount();
    const cases: [Partial<CreateReleaseRequest>, string][] = [
      [{ version: '' }, 'version'],
      [{ version: '1.0' }, 'version'],
      [{ version: '01.0.0' }, 'version'],
      [{ version: '1.0.0-' }, 'version'],
      [{ version: 'v1.0.0' }, 'version'],
      [{ version: `1.0.0-${'a'.repeat(59)}` }, 'version'],
      [{ version: '1.0.0', channel: 'nightly' }, 'channel'],
      [{ version: '1.0.0', notes: 'n'.repeat(10_001) }, 'notes'],
      [{ version: '1.0.0', entitlements: ['Not A Code'] }, 'entitlements[0]'],
      [{ version: '1.0.0', entitlements: Array.from({ length: 51 }, (_, i) => `e${i}`) }, 'entitlements'],
      [{ version: '1.0.0', published_at: 'last tuesday' }, 'published_at'],
      [{ version: '1.0.0', published_at: '2026-02-30' }, 'published_at'],
    ];
    for (const [fields, field] of cases)
      await expect(create({ ...of, ...fields })).rejects.toMatchObject({
        code: 'invalid_request',
        fieldErrors: [expect.objectContaining({ field })],
      });
    expect((await list(of)).data).toEqual([]);
  });

  it(`refuses a product's release past the ${releaseLimits.per_product}th (409)`, async () => {
    const of = await productOfNewAccount();
    const now = new Date();
    // Stored directly: a thousand creations over gRPC would only make this slower.
    await run.service.ctx.db.model('Release').insertMany(
      Array.from({ length: releaseLimits.per_product - 1 }, (_, i) => ({
        _id: newId('rel'),
        ...of,
        version: `0.${i}.0`,
        version_key: `0.${i}.0`,
        channel: 'stable',
        status: 'draft',
        notes: '',
        entitlements: [],
        artifacts: [],
        published_at: null,
        yanked_at: null,
        created_at: now,
      })),
    );
    await create({ ...of, version: '1.0.0' });
    await expect(create({ ...of, version: '1.0.1' })).rejects.toMatchObject({ code: 'conflict' });
    // The whole bounded list still pages, newest version first.
    const first = await list(of);
    expect(versionsOf(first.data).slice(0, 3)).toEqual(['1.0.0', '0.998.0', '0.997.0']);
    expect(first.page?.has_more).toBe(true);
  });
});

describe("another account's products and releases", () => {
  it('are not found (404): no release is made for, listed of, read, or changed in them', async () => {
    const mine = await productOfNewAccount();
    const release = await create({ ...mine, version: '1.0.0' });
    const other = newId('acct');
    await expect(create({ account_id: other, product_id: mine.product_id, version: '2.0.0' })).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('product not found'),
    });
    await expect(
      create({ ...mine, product_id: 'prod_01J0000000000000000000000Z', version: '2.0.0' }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(list({ account_id: other, product_id: mine.product_id })).rejects.toMatchObject({ code: 'not_found' });
    for (const call of ['getRelease', 'publishRelease', 'yankRelease', 'deleteRelease'] as const)
      await expect(api()[call]({ account_id: other, id: release.id })).rejects.toMatchObject({
        code: 'not_found',
        message: expect.stringContaining('release not found'),
      });
    expect(await api().getRelease({ account_id: mine.account_id, id: release.id })).toEqual(release);
  });
});

describe('listing releases', () => {
  // The precedence example of semver.org, created out of order, and versions whose numbers would sort
  // wrongly as text (1.10.0 after 1.9.0).
  const versions = ['1.0.0-beta.11', '1.9.0', '1.0.0-alpha', '1.10.0', '1.0.0-rc.1', '1.0.0', '1.0.0-alpha.beta'];
  const newestFirst = ['1.10.0', '1.9.0', '1.0.0', '1.0.0-rc.1', '1.0.0-beta.11', '1.0.0-alpha.beta', '1.0.0-alpha'];
  let of: { account_id: string; product_id: string };
  const byVersion = new Map<string, Release>();

  beforeAll(async () => {
    of = await productOfNewAccount();
    for (const version of versions) byVersion.set(version, await create({ ...of, version }));
    await api().publishRelease({ account_id: of.account_id, id: byVersion.get('1.9.0')!.id });
    await api().publishRelease({ account_id: of.account_id, id: byVersion.get('1.0.0')!.id });
    await api().yankRelease({ account_id: of.account_id, id: byVersion.get('1.0.0-rc.1')!.id });
  });

  it('gives newest version first, by Semantic Versioning precedence', async () => {
    const all = await list(of);
    expect(versionsOf(all.data)).toEqual(newestFirst);
    expect(all.page).toEqual({ has_more: false, next_cursor: '' });
  });

  it('filters by channel and by status, each or both', async () => {
    expect(versionsOf((await list(of, { channel: 'stable' })).data)).toEqual(['1.10.0', '1.9.0', '1.0.0']);
    expect(versionsOf((await list(of, { channel: 'beta' })).data)).toEqual(['1.0.0-rc.1', '1.0.0-beta.11']);
    expect(versionsOf((await list(of, { channel: 'alpha' })).data)).toEqual(['1.0.0-alpha.beta', '1.0.0-alpha']);
    expect(versionsOf((await list(of, { channel: 'dev' })).data)).toEqual([]);
    expect(versionsOf((await list(of, { status: 'published' })).data)).toEqual(['1.9.0', '1.0.0']);
    expect(versionsOf((await list(of, { status: 'yanked' })).data)).toEqual(['1.0.0-rc.1']);
    expect(versionsOf((await list(of, { channel: 'stable', status: 'draft' })).data)).toEqual(['1.10.0']);
  });

  it('refuses a filter outside its vocabulary (400, naming it)', async () => {
    for (const [filters, field] of [
      [{ channel: 'nightly' }, 'channel'],
      [{ status: 'live' }, 'status'],
    ] as const)
      await expect(list(of, filters)).rejects.toMatchObject({
        code: 'invalid_request',
        fieldErrors: [expect.objectContaining({ field })],
      });
  });

  it('pages with the last id of the page before, filters kept across pages', async () => {
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const page = await list(of, {}, { limit: 3, starting_after: cursor });
      seen.push(...versionsOf(page.data));
      if (!page.page?.has_more) break;
      expect(page.page.next_cursor).toBe(page.data[2].id);
      cursor = page.page.next_cursor;
    }
    expect(seen).toEqual(newestFirst);
    const drafts = await list(of, { status: 'draft' }, { limit: 2, starting_after: '' });
    expect(versionsOf(drafts.data)).toEqual(['1.10.0', '1.0.0-beta.11']);
    const rest = await list(of, { status: 'draft' }, { limit: 2, starting_after: drafts.page!.next_cursor });
    expect([versionsOf(rest.data), rest.page]).toEqual([
      ['1.0.0-alpha.beta', '1.0.0-alpha'],
      { has_more: false, next_cursor: '' },
    ]);
    await expect(list(of, {}, { limit: 2, starting_after: 'rel_01J0000000000000000000000Z' })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [expect.objectContaining({ field: 'starting_after' })],
    });
  });
});

describe("a release's states", () => {
  it('publishes a draft (now), announces release.published before answering, and publishes it only once', async () => {
    const of = await productOfNewAccount();
    const draft = await create({ ...of, version: '2.0.0', notes: 'Big one', entitlements: ['pro'] }, 'req-create');
    const before = Date.now();
    const published = await api().publishRelease({ account_id: of.account_id, id: draft.id }, { requestId: 'req-pub' });
    expect(published).toEqual({ ...draft, status: 'published', published_at: expect.any(String) });
    expect(Date.parse(published.published_at)).toBeGreaterThanOrEqual(before - 1000);
    // In the stream before the answer: the last message of its subject.
    const nc = await connect({ servers: natsServers(t.natsUrl) });
    try {
      const jsm = await nc.jetstreamManager();
      const last = await jsm.streams.getMessage(t.stream, { last_by_subj: `${t.subjectPrefix}.release.published` });
      expect(last.json<{ data: { release: { id: string } } }>().data.release.id).toBe(draft.id);
    } finally {
      await nc.close();
    }
    const event = await run.events.waitFor(
      (e) => e.type === 'release.published' && (e.data as { release: { id: string } }).release.id === draft.id,
    );
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'release.published',
      account_id: of.account_id,
      created_at: published.published_at,
      request_id: 'req-pub',
      data: {
        release: {
          id: draft.id,
          product_id: of.product_id,
          version: '2.0.0',
          channel: 'stable',
          status: 'published',
          notes: 'Big one',
          published_at: published.published_at,
          yanked_at: null,
          entitlements: ['pro'],
          artifacts: [],
          created_at: draft.created_at,
        },
      },
    });
    expect(run.events.subjectOf(event.id)).toBe(`${t.subjectPrefix}.release.published`);
    // Publishing again answers it as it is, and says nothing.
    expect(await api().publishRelease({ account_id: of.account_id, id: draft.id })).toEqual(published);
    // The release's later event (a yank), once seen, comes after anything a second publish could have sent.
    await api().yankRelease({ account_id: of.account_id, id: draft.id });
    await run.events.waitFor(
      (e) => e.type === 'release.yanked' && (e.data as { release: { id: string } }).release.id === draft.id,
    );
    const announced = run.events
      .all()
      .filter((e) => e.type === 'release.published' && (e.data as { release: { id: string } }).release.id === draft.id);
    expect(announced).toHaveLength(1);
  });

  it('publishes at the time given at creation', async () => {
    const of = await productOfNewAccount();
    const draft = await create({ ...of, version: '1.0.0', published_at: '2026-04-30T10:00:00+02:00' });
    expect(draft.published_at).toBe('2026-04-30T08:00:00.000Z');
    const published = await api().publishRelease({ account_id: of.account_id, id: draft.id });
    expect([published.status, published.published_at]).toEqual(['published', '2026-04-30T08:00:00.000Z']);
  });

  it('yanks a published release (release.yanked) or a draft; yanking again changes nothing; a yanked one is never published', async () => {
    const of = await productOfNewAccount();
    const release = await create({ ...of, version: '1.2.0' });
    const published = await api().publishRelease({ account_id: of.account_id, id: release.id });
    const yanked = await api().yankRelease({ account_id: of.account_id, id: release.id });
    expect(yanked).toEqual({ ...published, status: 'yanked', yanked_at: expect.any(String) });
    const event = await run.events.waitFor(
      (e) => e.type === 'release.yanked' && (e.data as { release: { id: string } }).release.id === release.id,
    );
    expect(event.data).toMatchObject({
      release: { id: release.id, status: 'yanked', published_at: published.published_at, yanked_at: yanked.yanked_at },
    });
    expect(run.events.subjectOf(event.id)).toBe(`${t.subjectPrefix}.release.yanked`);
    expect(await api().yankRelease({ account_id: of.account_id, id: release.id })).toEqual(yanked);
    await expect(api().publishRelease({ account_id: of.account_id, id: release.id })).rejects.toMatchObject({
      code: 'conflict',
    });
    const draft = await create({ ...of, version: '1.3.0-beta.1' });
    const yankedDraft = await api().yankRelease({ account_id: of.account_id, id: draft.id });
    expect([yankedDraft.status, yankedDraft.published_at]).toEqual(['yanked', '']);
    expect(versionsOf((await list(of, { status: 'yanked' })).data)).toEqual(['1.3.0-beta.1', '1.2.0']);
  });

  it('deletes a draft only (409 for a published or yanked one), answering the release it removed', async () => {
    const of = await productOfNewAccount();
    const draft = await create({ ...of, version: '0.9.0' });
    expect(await api().deleteRelease({ account_id: of.account_id, id: draft.id })).toEqual(draft);
    await expect(api().getRelease({ account_id: of.account_id, id: draft.id })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(api().deleteRelease({ account_id: of.account_id, id: draft.id })).rejects.toMatchObject({
      code: 'not_found',
    });
    // Its version is free again.
    const again = await create({ ...of, version: '0.9.0' });
    await api().publishRelease({ account_id: of.account_id, id: again.id });
    await expect(api().deleteRelease({ account_id: of.account_id, id: again.id })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('only a draft'),
    });
    await api().yankRelease({ account_id: of.account_id, id: again.id });
    await expect(api().deleteRelease({ account_id: of.account_id, id: again.id })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(versionsOf((await list(of)).data)).toEqual(['0.9.0']);
  });
});
