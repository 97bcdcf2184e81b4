import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';

// Upload bodies for the artifact store tests: random bytes made as they are read (a store that held a
// whole file would show in the memory, one that stops reading in `sent`), hashed on the way out.

export interface TestBody {
  stream: Readable;
  /** Bytes handed to the store so far. */
  readonly sent: number;
  /** Hex SHA-256 of everything sent (the whole file once the stream has ended). */
  sha256(): string;
}

export const MiB = 1024 * 1024;

/** `size` random bytes in chunks of `chunk`; with `failAfter`, the stream errors once that many went out. */
export function bodyOf(size: number, opts: { chunk?: number; failAfter?: number } = {}): TestBody {
  const chunk = opts.chunk ?? 64 * 1024;
  const hash = createHash('sha256');
  let sent = 0;
  async function* bytes() {
    while (sent < size) {
      if (opts.failAfter !== undefined && sent >= opts.failAfter) throw new Error('the client went away');
      const next = randomBytes(Math.min(chunk, size - sent));
      hash.update(next);
      sent += next.length;
      yield next;
    }
  }
  return {
    stream: Readable.from(bytes(), { objectMode: false }),
    get sent() {
      return sent;
    },
    sha256: () => hash.copy().digest('hex'),
  };
}

/** Reads a stream (or the parts of a body in hand) to its end: its size and hex SHA-256. */
export async function digestOf(
  stream: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer | Uint8Array>,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const part of stream) {
    hash.update(part);
    size += part.length;
  }
  return { size, sha256: hash.digest('hex') };
}

/** Every file (not folder) under a file store's folder, relative to it: what a refused upload must not leave. */
export function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => statSync(join(root, f)).isFile());
}
