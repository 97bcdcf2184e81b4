import type { Readable } from 'node:stream';

// Where release files live: a folder of this machine (file-store.ts, the default under DATA_DIR/artifacts)
// or any S3-compatible store (s3-store.ts, ARTIFACT_STORE_URL=s3://bucket?endpoint=…&region=…). The
// product service records what a release holds; only the gateway reads and writes the files.

/** What a stored file is: counted and hashed as it streamed in, never read whole. */
export interface StoredFile {
  size: number;
  /** Hex SHA-256 of the bytes stored. */
  sha256: string;
}

export interface ArtifactStore {
  /** file or s3: what /api/v1/status and the logs call it. */
  readonly kind: 'file' | 's3';
  /**
   * Streams `body` into `key`. Past `maxBytes` it stops reading and rejects with ArtifactTooLarge, and
   * nothing stays stored under `key` (a file half-written is removed, a multipart upload aborted). A
   * body that fails or ends early rejects with its error, leaving nothing either.
   */
  put(key: string, body: Readable, maxBytes: number): Promise<StoredFile>;
  /**
   * A URL that downloads `key` for `ttlSeconds`, named `filename` (S3: a presigned GET with its
   * Content-Disposition); null when the gateway serves the file itself (open()) behind its own link.
   */
  presignedUrl(key: string, filename: string, ttlSeconds: number): Promise<string | null>;
  /** The file's bytes and size, streamed; not_found when it is gone. */
  open(key: string): Promise<{ stream: Readable; size: number }>;
  /** Removes the file; nothing when it is already gone. */
  remove(key: string): Promise<void>;
  /** Resolves when the store can be used (the bucket exists, the folder is writable). */
  ready(): Promise<void>;
  /** Lets go of its connections (S3), at shutdown. */
  close?(): void;
}

/** An upload past ARTIFACT_MAX_BYTES (answered 413; nothing is kept). */
export class ArtifactTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than ${maxBytes} bytes`);
    this.name = 'ArtifactTooLarge';
  }
}
