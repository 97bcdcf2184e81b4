import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { AppError } from '@licensing/runtime';
import { SEAWEEDFS_WAIT_MS, startS3Server, type S3Server } from '../../../scripts/lib/seaweedfs';
import { eventually } from '../../../test/support/eventually';
import { ArtifactTooLarge } from '../../src/artifacts/artifact-store';
import { contentDisposition } from '../../src/artifacts/content-disposition';
import { S3ArtifactStore } from '../../src/artifacts/s3-store';
import { artifactStoreOf, s3LocationOf } from '../../src/artifacts/store-url';
import { bodyOf, digestOf, MiB } from './artifact-bodies';

// The S3 artifact store against a real S3-compatible server, SeaweedFS (scripts/lib/seaweedfs.ts; built
// once by the global set-up, started here on free ports): files stream in as multipart uploads (5 MiB
// parts here, so a few MB make several), a failed or oversized upload leaves neither an object nor an
// unfinished upload, and presigned links download the exact bytes under the file's name, then expire.

let server: S3Server;
let dataDir: string;
let store: S3ArtifactStore;
/** The bucket seen directly, to check what the store left in it. */
let s3: S3Client;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'licensing-test-seaweedfs-'));
  server = await startS3Server({ dataDir, bucket: 'releases' });
  const credentials = { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };
  store = new S3ArtifactStore({ ...s3LocationOf(server.url), credentials, partSize: 5 * MiB });
  s3 = new S3Client({ region: server.region, endpoint: server.endpoint, forcePathStyle: true, credentials });
  await store.ready();
}, SEAWEEDFS_WAIT_MS);

afterAll(async () => {
  store?.close();
  s3?.destroy();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

let n = 0;
const newKey = () => `acc_test/rel_test/${Date.now().toString(36)}${n++}`;

/** What the bucket holds under `key`: stored objects and unfinished multipart uploads. */
async function leftUnder(key: string): Promise<{ objects: number; uploads: number }> {
  const objects = await s3.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: key }));
  const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: server.bucket, Prefix: key }));
  return { objects: objects.KeyCount ?? 0, uploads: uploads.Uploads?.length ?? 0 };
}

describe('S3ArtifactStore over SeaweedFS', () => {
  it('streams a file of several MB in as a multipart upload, with its size and sha256, and reads it back', async () => {
    const body = bodyOf(12 * MiB + 12_345);
    const key = newKey();
    const stored = await store.put(key, body.stream, 64 * MiB);
    expect(stored).toEqual({ size: 12 * MiB + 12_345, sha256: body.sha256() });
    const head = await s3.send(new HeadObjectCommand({ Bucket: server.bucket, Key: key }));
    expect(head.ContentLength).toBe(stored.size);
    // Three parts of 5 MiB at most: S3 names a multipart object's ETag "<md5 of the parts' md5s>-<parts>".
    expect(head.ETag).toMatch(/-3"$/);
    const opened = await store.open(key);
    expect(opened.size).toBe(stored.size);
    expect(await digestOf(opened.stream)).toEqual(stored);
  });

  it('stores a small file (one PutObject) and an empty one', async () => {
    for (const size of [1_000, 0]) {
      const body = bodyOf(size);
      const key = newKey();
      expect(await store.put(key, body.stream, MiB)).toEqual({ size, sha256: body.sha256() });
      expect(await digestOf((await store.open(key)).stream)).toEqual({ size, sha256: body.sha256() });
    }
  });

  it('past maxBytes: stops reading, rejects with ArtifactTooLarge, and leaves no object and no unfinished upload', async () => {
    // Past the first part (a multipart upload is under way), and within one (a single PutObject would follow).
    const big = bodyOf(40 * MiB);
    const key = newKey();
    await expect(store.put(key, big.stream, 7 * MiB)).rejects.toBeInstanceOf(ArtifactTooLarge);
    expect(big.sent).toBeLessThan(9 * MiB); // the rest was never read
    expect(await leftUnder(key)).toEqual({ objects: 0, uploads: 0 });
    const small = newKey();
    await expect(store.put(small, bodyOf(4_000, { chunk: 500 }).stream, 1_024)).rejects.toBeInstanceOf(
      ArtifactTooLarge,
    );
    expect(await leftUnder(small)).toEqual({ objects: 0, uploads: 0 });
  });

  it('a body that fails midway rejects with its error and leaves nothing, whether or not a part was sent', async () => {
    for (const failAfter of [11 * MiB, 100_000]) {
      const key = newKey();
      const body = bodyOf(20 * MiB, { failAfter });
      await expect(store.put(key, body.stream, 64 * MiB)).rejects.toThrow('the client went away');
      expect(await leftUnder(key)).toEqual({ objects: 0, uploads: 0 });
    }
  });

  it('concurrent uploads to different keys each keep their own bytes', async () => {
    const bodies = Array.from({ length: 4 }, (_, i) => ({ key: newKey(), body: bodyOf(3 * MiB + i) }));
    const stored = await Promise.all(bodies.map(({ key, body }) => store.put(key, body.stream, 64 * MiB)));
    for (const [i, { key, body }] of bodies.entries()) {
      expect(stored[i]).toEqual({ size: 3 * MiB + i, sha256: body.sha256() });
      expect(await digestOf((await store.open(key)).stream)).toEqual(stored[i]);
    }
  });

  it('a presigned URL downloads the exact bytes under the file name with plain fetch, and stops working when it expires', async () => {
    const key = newKey();
    const stored = await store.put(key, bodyOf(3 * MiB).stream, 64 * MiB);
    const filename = 'Mon appli 1.0 — ünïcödé.dmg';
    const url = await store.presignedUrl(key, filename, 300);
    expect(url!.startsWith(`${server.endpoint}/${server.bucket}/${key}?`)).toBe(true);
    const answer = await fetch(url!);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-disposition')).toBe(contentDisposition(filename));
    const bytes = Buffer.from(await answer.arrayBuffer());
    expect(await digestOf([bytes])).toEqual(stored);
    // A link for one second: refused once that second is over (polled, no fixed wait).
    const brief = (await store.presignedUrl(key, 'app.bin', 1))!;
    const refused = await eventually(
      async () => {
        const r = await fetch(brief);
        const text = await r.text();
        if (r.status === 200) throw new Error('the link still works');
        return { status: r.status, text };
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    // Refused for its age (AWS words it the same way), not for a signature gone wrong.
    expect(refused).toEqual({ status: 403, text: expect.stringContaining('<Message>Request has expired</Message>') });
  });

  it('open of a removed or unknown key is not_found; remove is idempotent', async () => {
    const key = newKey();
    await store.put(key, bodyOf(10_000).stream, MiB);
    await store.remove(key);
    expect(await leftUnder(key)).toEqual({ objects: 0, uploads: 0 });
    const err = await store.open(key).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('not_found');
    await expect(store.remove(key)).resolves.toBeUndefined();
    await expect(store.open(newKey())).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('ready()', () => {
  // The standard AWS variables these tests set, put back as they were after each.
  const AWS_VARIABLES = [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SHARED_CREDENTIALS_FILE',
    'AWS_CONFIG_FILE',
    'AWS_EC2_METADATA_DISABLED',
  ] as const;
  const saved = Object.fromEntries(AWS_VARIABLES.map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const name of AWS_VARIABLES)
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
  });

  it('creates a missing bucket, with credentials from the standard AWS environment (ARTIFACT_STORE_URL as given)', async () => {
    process.env.AWS_ACCESS_KEY_ID = server.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = server.secretAccessKey;
    const url = server.url.replace(`s3://${server.bucket}?`, 's3://made-by-ready?');
    const fresh = artifactStoreOf(url, dataDir) as S3ArtifactStore;
    try {
      expect(fresh.kind).toBe('s3');
      await expect(s3.send(new HeadBucketCommand({ Bucket: 'made-by-ready' }))).rejects.toMatchObject({
        $metadata: { httpStatusCode: 404 },
      });
      await fresh.ready();
      await s3.send(new HeadBucketCommand({ Bucket: 'made-by-ready' }));
      await fresh.ready(); // and an existing one is simply used
      const body = bodyOf(2_000);
      expect(await fresh.put(newKey(), body.stream, MiB)).toEqual({ size: 2_000, sha256: body.sha256() });
    } finally {
      fresh.close();
    }
  });

  it('says clearly when there are no credentials: the shared-credentials file deploy/make-secrets.sh writes until it is filled in', async () => {
    for (const name of AWS_VARIABLES) delete process.env[name];
    const placeholder = join(dataDir, 'aws_credentials');
    writeFileSync(placeholder, '# [default]\n# aws_access_key_id = AKIA...\n# aws_secret_access_key = ...\n');
    process.env.AWS_SHARED_CREDENTIALS_FILE = placeholder;
    process.env.AWS_CONFIG_FILE = join(dataDir, 'no-aws-config');
    process.env.AWS_EC2_METADATA_DISABLED = 'true'; // not an EC2 machine: no instance role to ask for
    const store = artifactStoreOf(server.url, dataDir) as S3ArtifactStore;
    try {
      await expect(store.ready()).rejects.toThrow(
        `no credentials for the S3 store at ${server.endpoint}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_SHARED_CREDENTIALS_FILE`,
      );
    } finally {
      store.close();
    }
  });

  it('says clearly when the credentials are refused, without echoing them', async () => {
    const secretAccessKey = 'not-the-secret-0123456789';
    const wrong = new S3ArtifactStore({
      ...s3LocationOf(server.url),
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey },
    });
    try {
      const err = (await wrong.ready().catch((e: unknown) => e)) as Error;
      expect(err.message).toContain('refused these credentials for the bucket releases (403)');
      expect(err.message).not.toContain(secretAccessKey);
    } finally {
      wrong.close();
    }
  });

  it('says clearly when nothing answers at the endpoint', async () => {
    const nowhere = new S3ArtifactStore({
      bucket: 'releases',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9', // discard: nothing listens there
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'example-secret' },
    });
    try {
      await expect(nowhere.ready()).rejects.toThrow(
        /^the S3 store at http:\/\/127\.0\.0\.1:9 did not answer for the bucket releases: /,
      );
    } finally {
      nowhere.close();
    }
  });
});
