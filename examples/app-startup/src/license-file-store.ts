// Where the app keeps the last licence file it was given, so that a start
// without network can still be checked (offline, with the product's public
// keys). The file is signed: editing it makes it worthless, so plain JSON on
// disk is enough.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { LicenseFile } from '@licensing/client';

export interface LicenseFileStore {
  /** The last file kept, or undefined (none yet, unreadable or not JSON). */
  read(): Promise<unknown>;
  write(file: LicenseFile): Promise<void>;
}

/** A JSON file, written atomically and readable by the user only. */
export class DiskLicenseFileStore implements LicenseFileStore {
  constructor(private readonly path: string) {}

  async read(): Promise<unknown> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8'));
    } catch {
      return undefined;
    }
  }

  async write(file: LicenseFile): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    // Write then rename, so a crash never leaves half a file.
    await writeFile(`${this.path}.tmp`, JSON.stringify(file), { mode: 0o600 });
    await rename(`${this.path}.tmp`, this.path);
  }
}

export class MemoryLicenseFileStore implements LicenseFileStore {
  constructor(private file?: unknown) {}
  async read(): Promise<unknown> {
    return this.file;
  }
  async write(file: LicenseFile): Promise<void> {
    this.file = file;
  }
}
