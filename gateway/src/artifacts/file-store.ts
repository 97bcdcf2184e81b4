import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@licensing/runtime';
import type { ArtifactStore, StoredFile } from './artifact-store';
import { MeteredBody } from './metered-body';

/** Storage keys are made by the gateway (ids and a random part): nothing else is ever a path here. */
const SAFE_KEY = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*$/;

/**
 * Release files in a folder of this machine (DATA_DIR/artifacts under `npm start`). A file is written
 * under a temporary name and renamed once whole, so a reader never sees half of one; the gateway
 * serves it behind its own signed link (presignedUrl is null). Several gateways share it only through
 * a shared volume: docs/operations.md, "Release files".
 */
export class FileArtifactStore implements ArtifactStore {
  readonly kind = 'file';

  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    if (!SAFE_KEY.test(key)) throw new Error(`not a storage key: ${key}`);
    return join(this.root, key);
  }

  async ready(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<StoredFile> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.${randomBytes(6).toString('hex')}.part`;
    const metered = new MeteredBody(maxBytes);
    try {
      await pipeline(body, metered, createWriteStream(partial, { flags: 'wx' }));
      await rename(partial, path);
    } catch (err) {
      await unlink(partial).catch(() => undefined);
      throw err;
    }
    return { size: metered.bytes, sha256: metered.digest() };
  }

  async presignedUrl(): Promise<string | null> {
    return null;
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    const path = this.pathOf(key);
    const size = await stat(path).then(
      (s) => s.size,
      () => {
        throw AppError.notFound('file');
      },
    );
    return { stream: createReadStream(path), size };
  }

  async remove(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}
