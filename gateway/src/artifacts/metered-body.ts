import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { ArtifactTooLarge } from './artifact-store';

/**
 * A pass-through that counts and hashes what flows into a store, and fails with ArtifactTooLarge
 * the moment more than `maxBytes` went by, so no store ever takes more than the limit.
 */
export class MeteredBody extends Transform {
  private readonly hash = createHash('sha256');
  bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      done(new ArtifactTooLarge(this.maxBytes));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** Hex SHA-256 of everything that went through (once the stream has ended). */
  digest(): string {
    return this.hash.digest('hex');
  }
}
