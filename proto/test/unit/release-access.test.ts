import {
  artifactFilenameProblem,
  artifactFits,
  artifactTargetProblem,
  channelsUpTo,
  grantMessage,
  grantOf,
  releaseGrant,
  releaseRefusal,
  type AnswerForGrant,
} from '../../index';

// Who may download and be offered which release, from a validation answer (release-access.ts), and
// the rules of a release's files (artifact-rules.ts).

const licence = (entitlements: string[], strategy = '', expires_at = '2026-05-01T00:00:00.000Z') => ({
  entitlements,
  expires_at,
  policy: { expiration_strategy: strategy },
});
const answer = (a: Partial<AnswerForGrant>): AnswerForGrant => ({
  valid: true,
  code: 'valid',
  detail: 'the licence is valid',
  next_action: 'none',
  license: licence([]),
  ...a,
});
const release = (r: Partial<{ channel: string; status: string; entitlements: string[]; published_at: string }>) => ({
  channel: 'stable',
  status: 'published',
  entitlements: [],
  published_at: '2026-04-01T00:00:00.000Z',
  ...r,
});

describe('releaseGrant', () => {
  it('grants a valid licence stable, and each other channel only with channel.<name>', () => {
    expect(releaseGrant(answer({}))).toEqual({
      grant: { channels: ['stable'], entitlements: [], publishedBefore: null },
    });
    const beta = releaseGrant(answer({ license: licence(['channel.beta', 'pro']) }));
    expect(beta).toEqual({
      grant: { channels: ['stable', 'beta'], entitlements: ['channel.beta', 'pro'], publishedBefore: null },
    });
  });

  it('grants a licence refused only for its machine (no activation, no seat): an installer needs none', () => {
    for (const code of ['not_activated', 'activation_limit_reached', 'lease_expired'])
      expect('grant' in releaseGrant(answer({ valid: false, code }))).toBe(true);
  });

  it('refuses an expired licence under restrict (and by default), in the validation answer’s words', () => {
    for (const strategy of ['', 'restrict', 'revoke_access'])
      expect(
        releaseGrant(
          answer({
            valid: false,
            code: 'expired',
            detail: 'the licence has expired',
            next_action: 'renew',
            license: licence([], strategy),
          }),
        ),
      ).toEqual({ refusal: { code: 'expired', detail: 'the licence has expired', next_action: 'renew' } });
  });

  it('keeps an expired licence under maintain_access to what was published before its expiry', () => {
    const judged = releaseGrant(
      answer({ valid: false, code: 'expired', next_action: 'renew', license: licence([], 'maintain_access') }),
    );
    expect(judged).toEqual({
      grant: { channels: ['stable'], entitlements: [], publishedBefore: new Date('2026-05-01T00:00:00.000Z') },
    });
    const grant = (judged as { grant: Parameters<typeof releaseRefusal>[1] }).grant;
    expect(releaseRefusal(release({ published_at: '2026-04-30T23:59:59.000Z' }), grant)).toBeNull();
    expect(releaseRefusal(release({ published_at: '2026-05-01T00:00:00.000Z' }), grant)).toMatchObject({
      code: 'expired',
      next_action: 'renew',
    });
  });

  it('refuses revoked, suspended and unknown licences', () => {
    for (const code of ['revoked', 'suspended', 'subscription_unpaid', 'product_mismatch'])
      expect('refusal' in releaseGrant(answer({ valid: false, code }))).toBe(true);
    expect(releaseGrant(answer({ valid: false, code: 'not_found', license: undefined }))).toHaveProperty(
      'refusal.code',
      'not_found',
    );
  });
});

describe('releaseRefusal', () => {
  const grant = { channels: ['stable' as const], entitlements: ['pro'], publishedBefore: null };
  it('covers a published release on a granted channel whose entitlements the licence has', () => {
    expect(releaseRefusal(release({ entitlements: ['pro'] }), grant)).toBeNull();
  });
  it('refuses drafts and yanked releases, other channels and missing entitlements', () => {
    expect(releaseRefusal(release({ status: 'yanked' }), grant)).toMatchObject({ code: 'release_unavailable' });
    expect(releaseRefusal(release({ status: 'draft' }), grant)).toMatchObject({ code: 'release_unavailable' });
    expect(releaseRefusal(release({ channel: 'beta' }), grant)).toMatchObject({
      code: 'entitlements_missing',
      detail: expect.stringContaining('channel.beta'),
    });
    expect(releaseRefusal(release({ entitlements: ['pro', 'sync'] }), grant)).toMatchObject({
      code: 'entitlements_missing',
      detail: expect.stringContaining('sync'),
    });
  });
});

it('offers a channel and every more stable one', () => {
  expect(channelsUpTo('')).toEqual(['stable']);
  expect(channelsUpTo('beta')).toEqual(['stable', 'beta']);
  expect(channelsUpTo('dev')).toEqual(['stable', 'beta', 'alpha', 'dev']);
  expect(channelsUpTo('nightly')).toEqual(['stable']);
});

it('carries a grant through FindReleases unchanged', () => {
  const grant = {
    channels: ['stable' as const, 'beta' as const],
    entitlements: ['a'],
    publishedBefore: new Date('2026-01-02T03:04:05.000Z'),
  };
  expect(grantOf(grantMessage(grant))).toEqual(grant);
  expect(grantOf({ channels: ['stable', 'bogus'], entitlements: [], published_before: '' })).toEqual({
    channels: ['stable'],
    entitlements: [],
    publishedBefore: null,
  });
});

describe('artifact rules', () => {
  it('takes one printable file name of at most 255 bytes', () => {
    for (const ok of ['App-1.2.dmg', 'Setup App (x64).exe', 'Ünïcode.zip', 'a'.repeat(255)])
      expect(artifactFilenameProblem(ok)).toBeNull();
    for (const bad of [
      '',
      '.',
      '..',
      'a/b',
      'a\\b',
      'x..y',
      'tab\there',
      'del\u007f',
      'c1\u0085',
      'a'.repeat(256),
      'é'.repeat(128),
    ])
      expect(artifactFilenameProblem(bad)).not.toBeNull();
  });
  it('knows the platforms and archs, and which files fit a machine', () => {
    expect(artifactTargetProblem('macos', 'universal')).toBeNull();
    expect(artifactTargetProblem('amiga', 'any')).toMatchObject({ field: 'platform' });
    expect(artifactTargetProblem('linux', 'mips')).toMatchObject({ field: 'arch' });
    expect(artifactFits({ platform: 'macos', arch: 'universal' }, 'macos', 'aarch64')).toBe(true);
    expect(artifactFits({ platform: 'any', arch: 'any' }, 'linux', 'x86_64')).toBe(true);
    expect(artifactFits({ platform: 'windows', arch: 'x86_64' }, 'windows', 'aarch64')).toBe(false);
    expect(artifactFits({ platform: 'windows', arch: 'x86_64' }, 'macos', '')).toBe(false);
  });
});
