// Where the app keeps the last validation answer, so that it asks the
// server at most once per cache_until and still starts during a short outage.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KeyValidation } from '@licensing/client';

export interface CachedAnswer {
  licenseKey: string;
  answer: KeyValidation;
}

export interface AnswerCache {
  read(): Promise<CachedAnswer | undefined>;
  write(entry: CachedAnswer): Promise<void>;
}

/** A JSON file; unreadable or foreign content counts as no cache. */
export class FileAnswerCache implements AnswerCache {
  constructor(private readonly path: string) {}

  async read(): Promise<CachedAnswer | undefined> {
    try {
      const entry = JSON.parse(await readFile(this.path, 'utf8')) as CachedAnswer;
      return typeof entry?.licenseKey === 'string' && typeof entry.answer?.cache_until === 'string' ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  async write(entry: CachedAnswer): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    // Write then rename, so a crash never leaves half a file.
    await writeFile(`${this.path}.tmp`, JSON.stringify(entry), { mode: 0o600 });
    await rename(`${this.path}.tmp`, this.path);
  }
}

export class MemoryAnswerCache implements AnswerCache {
  private entry: CachedAnswer | undefined;
  async read(): Promise<CachedAnswer | undefined> {
    return this.entry;
  }
  async write(entry: CachedAnswer): Promise<void> {
    this.entry = entry;
  }
}
