import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  type CreateBucketCommandInput,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { AppError } from '@licensing/runtime';
import type { ArtifactStore, StoredFile } from './artifact-store';
import { contentDisposition } from './content-disposition';
import { MeteredBody } from './metered-body';

/** Where the bucket is: what ARTIFACT_STORE_URL says (store-url.ts). */
export interface S3Location {
  bucket: string;
  /** AWS region; the signature names it, so even a single-region store needs one (us-east-1 by default). */
  region: string;
  /** http(s)://host:port of an S3-compatible store; absent for AWS itself. */
  endpoint?: string;
  /** bucket in the path (http://host/bucket/key) rather than the host name; most S3-compatible stores need it. */
  forcePathStyle: boolean;
}

export interface S3StoreOptions extends S3Location {
  /** Left out in production: the SDK's default chain (AWS_ACCESS_KEY_ID…, a shared credentials file, a role). */
  credentials?: S3ClientConfig['credentials'];
  /** Bytes per part of a multipart upload (8 MiB unless the file limit needs bigger parts). */
  partSize?: number;
  /** Parts in flight at once: with partSize, what one upload holds in memory (about partSize × (queueSize + 1)). */
  queueSize?: number;
}

const MiB = 1024 * 1024;
const DEFAULT_PART_SIZE = 8 * MiB;
/** S3's smallest part but the last, and its most parts per upload. */
const MIN_PART_SIZE = 5 * MiB;
const MAX_PARTS = 10_000;

/**
 * Release files in an S3 bucket, AWS's or any S3-compatible store's (SeaweedFS, Ceph, R2, …). An upload
 * streams through MeteredBody into a multipart upload, so a gateway holds a few parts of a file at a
 * time whatever its size, and a failed or oversized one is aborted (S3 keeps no parts). Downloads are
 * presigned GETs that name the file, so the bytes never pass through the gateway.
 */
export class S3ArtifactStore implements ArtifactStore {
  readonly kind = 's3';
  readonly location: S3Location;
  private readonly client: S3Client;
  private readonly partSize: number;
  private readonly queueSize: number;

  constructor(options: S3StoreOptions) {
    const { credentials, partSize, queueSize, ...location } = options;
    this.location = location;
    this.partSize = Math.max(MIN_PART_SIZE, partSize ?? DEFAULT_PART_SIZE);
    this.queueSize = Math.max(1, queueSize ?? 2);
    const thirdParty = location.endpoint !== undefined;
    this.client = new S3Client({
      region: location.region,
      endpoint: location.endpoint,
      forcePathStyle: location.forcePathStyle,
      ...(credentials ? { credentials } : {}),
      // Stores other than AWS often reject or mangle the CRC32 checksums the SDK adds by default;
      // the gateway hashes every file itself (sha256), so only the checksums S3 requires are sent.
      requestChecksumCalculation: thirdParty ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
      responseChecksumValidation: thirdParty ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
      // A store that does not answer fails the request instead of holding it (and /readyz) forever.
      requestHandler: { connectionTimeout: 5_000 },
    });
  }

  async ready(): Promise<void> {
    const { bucket } = this.location;
    const status = await this.client.send(new HeadBucketCommand({ Bucket: bucket })).then(
      () => 200,
      (err: unknown) => httpStatusOf(err) ?? Promise.reject(this.unusable(err)),
    );
    if (status === 200) return;
    // S3 answers 403 alike for an unknown key, a wrong secret and a key without rights on the bucket.
    if (status === 403)
      throw new Error(
        `the S3 store refused these credentials for the bucket ${bucket} (403): check the access key, its secret and its rights on the bucket (docs/operations.md, "Release files")`,
      );
    if (status === 301)
      throw new Error(
        `the S3 bucket ${bucket} is in another region than ${this.location.region} (301): name its region in ARTIFACT_STORE_URL (&region=…)`,
      );
    if (status !== 404) throw new Error(`the S3 store answered ${status} when asked for the bucket ${bucket}`);
    await this.createBucket();
  }

  private async createBucket(): Promise<void> {
    const { bucket, region } = this.location;
    const input: CreateBucketCommandInput = { Bucket: bucket };
    // AWS wants the region named for any bucket outside us-east-1 (and refuses it for us-east-1).
    if (region !== 'us-east-1' && !this.location.endpoint)
      input.CreateBucketConfiguration = { LocationConstraint: region as BucketLocationConstraint };
    try {
      await this.client.send(new CreateBucketCommand(input));
    } catch (err) {
      // Another gateway starting at the same moment made it first.
      if ((err as Error).name === 'BucketAlreadyOwnedByYou') return;
      throw new Error(
        `the S3 bucket ${bucket} does not exist and could not be created (${describe(err)}): create it, or allow these credentials s3:CreateBucket`,
      );
    }
  }

  /** Why no request reached the store: no credentials anywhere the SDK looks, or nothing answering. */
  private unusable(err: unknown): Error {
    const where = this.location.endpoint ?? `AWS S3 (${this.location.region})`;
    if ((err as Error)?.name === 'CredentialsProviderError')
      return new Error(
        `no credentials for the S3 store at ${where}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_SHARED_CREDENTIALS_FILE, or give the machine or pod a role (docs/operations.md, "Release files")`,
      );
    return new Error(
      `the S3 store at ${where} did not answer for the bucket ${this.location.bucket}: ${describe(err)}`,
    );
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<StoredFile> {
    const metered = new MeteredBody(maxBytes);
    // The upload reads a plain stream behind the meter, which a failed upload can end at once.
    const out = new PassThrough();
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: key, Body: out, ContentType: 'application/octet-stream' },
      partSize: this.partSizeFor(maxBytes),
      queueSize: this.queueSize,
      // Parts of a failed upload are deleted (AbortMultipartUpload), never left to be billed.
      leavePartsOnError: false,
    });
    // A store that fails ends the body too, so the two settle together.
    const uploaded = upload.done().catch((err: unknown) => {
      out.destroy(err as Error);
      throw err;
    });
    const flowed = pipeline(body, metered, out);
    // Both settle before answering: done() has aborted the multipart upload by the time it rejects.
    const [sent, flow] = await Promise.allSettled([uploaded, flowed]);
    // The body's own failure (or ArtifactTooLarge) first: it is the cause, the upload's error its echo.
    if (flow.status === 'rejected') throw flow.reason;
    if (sent.status === 'rejected') throw sent.reason;
    return { size: metered.bytes, sha256: metered.digest() };
  }

  /** 8 MiB parts, or bigger when the file limit could need more than S3's 10,000 parts. */
  private partSizeFor(maxBytes: number): number {
    return Math.max(this.partSize, Math.ceil(maxBytes / MAX_PARTS / MiB) * MiB);
  }

  async presignedUrl(key: string, filename: string, ttlSeconds: number): Promise<string | null> {
    const get = new GetObjectCommand({
      Bucket: this.location.bucket,
      Key: key,
      ResponseContentDisposition: contentDisposition(filename),
      ResponseContentType: 'application/octet-stream',
    });
    return getSignedUrl(this.client, get, { expiresIn: ttlSeconds });
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      return { stream: out.Body as Readable, size: out.ContentLength ?? 0 };
    } catch (err) {
      if (httpStatusOf(err) === 404) throw AppError.notFound('file');
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    // S3 answers a delete of a missing key with success: nothing to tell apart.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: key }));
  }

  /** Closes the client's pooled connections (at shutdown, and after a test). */
  close(): void {
    this.client.destroy();
  }
}

/** The HTTP status of an answer S3 gave (undefined when none came: refused connection, DNS, timeout). */
function httpStatusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** An SDK error as a line for a person: its name and message, never the request (it carries the signature). */
function describe(err: unknown): string {
  const e = err as Error;
  const status = httpStatusOf(err);
  return `${e?.name ?? 'Error'}${status ? ` ${status}` : ''}: ${e?.message ?? String(err)}`;
}
