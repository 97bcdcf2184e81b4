import { join } from 'node:path';
import { FileArtifactStore } from '../../src/artifacts/file-store';
import { S3ArtifactStore } from '../../src/artifacts/s3-store';
import { artifactStoreOf, s3LocationOf } from '../../src/artifacts/store-url';

// ARTIFACT_STORE_URL: empty for the folder under DATA_DIR, s3://bucket?… for any S3-compatible store,
// anything else refused at start with a message naming the setting and the forms it takes, and never
// repeating a credential someone put in the URL.

describe('artifactStoreOf', () => {
  it('empty (or blank): files under DATA_DIR/artifacts', () => {
    for (const url of ['', '  ']) {
      const store = artifactStoreOf(url, '/var/lib/licensing');
      expect(store).toBeInstanceOf(FileArtifactStore);
      expect(store.kind).toBe('file');
      expect((store as unknown as { root: string }).root).toBe(join('/var/lib/licensing', 'artifacts'));
    }
  });

  it('s3://…: the S3 store of that bucket', () => {
    const store = artifactStoreOf('s3://releases?endpoint=http://127.0.0.1:8333&region=us-east-1', '/data');
    expect(store).toBeInstanceOf(S3ArtifactStore);
    expect(store.kind).toBe('s3');
    expect((store as S3ArtifactStore).location).toEqual({
      bucket: 'releases',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:8333',
      forcePathStyle: true,
    });
    (store as S3ArtifactStore).close();
  });
});

describe('s3LocationOf', () => {
  it.each([
    // AWS itself: no endpoint, virtual-host addressing, us-east-1 unless named.
    ['s3://releases', { bucket: 'releases', region: 'us-east-1', forcePathStyle: false }],
    [
      's3://acme.releases-2026?region=eu-west-3',
      { bucket: 'acme.releases-2026', region: 'eu-west-3', forcePathStyle: false },
    ],
    ['s3://releases?force_path_style=true', { bucket: 'releases', region: 'us-east-1', forcePathStyle: true }],
    // Another store: path style unless told otherwise; the endpoint as its origin.
    [
      's3://releases?endpoint=http://seaweedfs:8333',
      { bucket: 'releases', region: 'us-east-1', endpoint: 'http://seaweedfs:8333', forcePathStyle: true },
    ],
    [
      's3://releases?endpoint=https://s3.example.com/&region=auto&force_path_style=false',
      { bucket: 'releases', region: 'auto', endpoint: 'https://s3.example.com', forcePathStyle: false },
    ],
    [
      '  s3://releases?region=us-east-1&endpoint=http://127.0.0.1:9000  ',
      { bucket: 'releases', region: 'us-east-1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true },
    ],
  ])('%s', (url, location) => {
    expect(s3LocationOf(url)).toEqual(location);
  });

  it.each([
    ['/data/artifacts', 'is not a URL'],
    ['http://releases', 'uses http://, which is not a store the gateway knows'],
    ['file:///data/artifacts', 'uses file://, which is not a store the gateway knows'],
    ['s3://', 'names the bucket "", which is not a valid S3 bucket name'],
    ['s3://ab', 'names the bucket "ab", which is not a valid S3 bucket name'],
    ['s3://Releases_2026', 'names the bucket "Releases_2026", which is not a valid S3 bucket name'],
    ['s3://releases:9000', 'has a port after the bucket (the store\'s address goes in "endpoint=")'],
    ['s3://releases/builds', 'has a path after the bucket'],
    ['s3://releases#top', 'has a #fragment'],
    ['s3://releases?forcePathStyle=true', 'has the unknown parameter "forcePathStyle"'],
    ['s3://releases?force_path_style=yes', 'has force_path_style=yes, which is neither true nor false'],
    ['s3://releases?region=EU%20West', 'names the region "EU West", which is not a region name'],
    ['s3://releases?endpoint=seaweedfs', 'has an endpoint that is not a URL'],
    ['s3://releases?endpoint=ftp://seaweedfs:21', 'has an endpoint that is not http(s)'],
    [
      's3://releases?endpoint=http://seaweedfs:8333/releases',
      'has an endpoint with a path or query (only http(s)://host:port)',
    ],
  ])('refuses %s: it %s', (url, why) => {
    expect(() => artifactStoreOf(url, '/data')).toThrow(
      `ARTIFACT_STORE_URL ${why}: it must be empty (files under DATA_DIR/artifacts) or s3://<bucket>[?endpoint=http(s)://host:port][&region=<region>][&force_path_style=true|false]`,
    );
  });

  it('refuses credentials in the URL or its endpoint, pointing at the AWS variables, without repeating them', () => {
    for (const url of [
      's3://AKIAEXAMPLE:wJalrXUtnFEMI-K7MDENG@releases',
      's3://releases?endpoint=http://AKIAEXAMPLE:wJalrXUtnFEMI-K7MDENG@seaweedfs:8333',
    ]) {
      const err = (() => {
        try {
          s3LocationOf(url);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(err?.message).toMatch(
        /^ARTIFACT_STORE_URL has credentials in its endpoint|^ARTIFACT_STORE_URL holds credentials/,
      );
      expect(err?.message).toContain('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
      expect(err?.message).not.toContain('wJalrXUtnFEMI');
      expect(err?.message).not.toContain('AKIAEXAMPLE');
    }
  });
});
