import { Release } from '@licensing/proto';
import { DownloadLinks } from '../../src/artifacts/download-links';
import { contentDisposition } from '../../src/artifacts/content-disposition';
import { appcastXml } from '../../src/routes/appcast';
import { artifactUrl, bestArtifact } from '../../src/routes/update-feeds';

// The pure parts of release downloads and feeds: the signed links the gateway serves its own files
// behind, the Sparkle appcast, the file a feed picks for a machine, and how a download is named.

const release = Release.fromPartial({
  id: 'rel_1',
  version: '1.2.0-beta.1',
  channel: 'beta',
  notes: 'Fixes <script>alert(1)</script> & more',
  published_at: '2026-05-01T10:00:00.000Z',
  artifacts: [
    { filename: 'App.zip', platform: 'any', arch: 'any', size: 10, sha256: 'a', signature: '' },
    { filename: 'App-mac.dmg', platform: 'macos', arch: 'universal', size: 20, sha256: 'b', signature: 'ed"sig' },
    { filename: 'App-arm.dmg', platform: 'macos', arch: 'aarch64', size: 30, sha256: 'c', signature: '' },
  ],
});

describe('download links', () => {
  const links = new DownloadLinks('internal-token');
  const target = { key: 'acct/rel/abc', filename: 'App 1.0.dmg', expires: 1_000 };

  it('names the file until it expires, then is gone (410)', () => {
    const token = links.sign(target);
    expect(links.verify(token, 999_000)).toEqual(target);
    expect(() => links.verify(token, 1_000_000)).toThrow(expect.objectContaining({ code: 'gone' }));
  });

  it('is not found when changed, made with another token, or not a link at all', () => {
    const token = links.sign(target);
    const [payload, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ k: 'acct/other', f: 'x', e: 9e9 })).toString('base64url');
    for (const bad of [
      `${forged}.${mac}`,
      `${payload}.${mac.slice(0, -1)}A`,
      new DownloadLinks('other').sign(target),
      'nodot',
      '.',
      '',
    ])
      expect(() => links.verify(bad, 0)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

it('writes an appcast with every value escaped and the enclosure signed', () => {
  const xml = appcastXml('https://x.test/api/v1/products/p/appcast.xml', [
    { release, artifact: release.artifacts[1], url: 'https://x.test/a?license_key=K&x=1' },
  ]);
  expect(xml).toContain('<sparkle:version>1.2.0-beta.1</sparkle:version>');
  expect(xml).toContain('<sparkle:channel>beta</sparkle:channel>');
  expect(xml).toContain('Fixes &lt;script&gt;alert(1)&lt;/script&gt; &amp; more');
  expect(xml).toContain('url="https://x.test/a?license_key=K&amp;x=1" length="20"');
  expect(xml).toContain('sparkle:edSignature="ed&quot;sig"');
  expect(xml).toContain(`<pubDate>${new Date(release.published_at).toUTCString()}</pubDate>`);
  expect(xml).not.toContain('<script>');
});

it('picks the file that fits the machine best, an exact one before one for any', () => {
  expect(bestArtifact(release, 'macos', 'aarch64')!.filename).toBe('App-arm.dmg');
  expect(bestArtifact(release, 'macos', 'x86_64')!.filename).toBe('App-mac.dmg');
  expect(bestArtifact(release, 'linux', 'x86_64')!.filename).toBe('App.zip');
  expect(artifactUrl('https://x.test', release, 'A b.zip', 'K-1')).toBe(
    'https://x.test/api/v1/releases/rel_1/artifacts/A%20b.zip?license_key=K-1',
  );
});

it('names a download in ASCII and exactly in UTF-8', () => {
  expect(contentDisposition('Ünï "app".zip')).toBe(
    `attachment; filename="_n_ _app_.zip"; filename*=UTF-8''%C3%9Cn%C3%AF%20%22app%22.zip`,
  );
});
