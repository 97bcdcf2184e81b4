import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Secrets a service must use later (signing keys, webhook secrets) cannot be
// hashed; they are kept encrypted with AES-256-GCM under a key from config.
//
// The setting holds a keyring: one key, or several with ids, the first sealing
// and every one opening (docs/operations.md, "Rotating secrets"):
//   SIGNING_KEY_SECRET=<base64>                      one key, the id "legacy"
//   SIGNING_KEY_SECRET=k2:<base64>,legacy:<base64>   k2 seals, both open
//   SIGNING_KEY_SECRET=<base64>,k2:<base64>          legacy still seals, k2 opens
// (an entry without an id is the key "legacy"). A value sealed under a key with an id is stored as
// `<id>.<base64url>`; under "legacy" it is stored as before, bare base64url (which never holds a
// dot), so a process of the previous release still opens it after a rollback.

export const LEGACY_KEY_ID = 'legacy';
const KEY_ID = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const MAX_KEYS = 8;

/** The 32-byte key from its base64 setting; a clear error otherwise. */
export function sealingKey(base64: string, setting: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error(`${setting} must be 32 bytes, base64-encoded`);
  return key;
}

/** base64url of iv (12) | tag (16) | ciphertext */
export function seal(plain: Buffer, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

export function unseal(sealed: string, key: Buffer): Buffer {
  const raw = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
}

/** The id of the key a stored value was sealed under ("legacy" for a bare one). */
export function sealedKeyId(sealed: string): string {
  const dot = sealed.indexOf('.');
  return dot < 0 ? LEGACY_KEY_ID : sealed.slice(0, dot);
}

/** Sealing keys by id: the first seals, all open. Built from a setting by `Keyring.parse`. */
export class Keyring {
  private constructor(
    private readonly keys: Map<string, Buffer>,
    /** The id of the key new values are sealed under. */
    readonly currentId: string,
  ) {}

  /** Parses the setting (see above); every problem is an error naming the setting, never the key. */
  static parse(spec: string, setting: string): Keyring {
    const keys = new Map<string, Buffer>();
    let current: string | undefined;
    const entries = spec
      .split(/[,\n]/)
      .map((s) => s.trim())
      .filter(Boolean);
    if (!entries.length) throw new Error(`${setting} must be 32 bytes, base64-encoded`);
    if (entries.length > MAX_KEYS) throw new Error(`${setting} holds more than ${MAX_KEYS} keys`);
    for (const entry of entries) {
      const colon = entry.indexOf(':');
      const id = colon < 0 ? LEGACY_KEY_ID : entry.slice(0, colon);
      if (!KEY_ID.test(id))
        throw new Error(`${setting}: a key id must be 1–32 of a-z, 0-9, "_" and "-", starting with a letter or digit`);
      if (keys.has(id)) throw new Error(`${setting}: the key id "${id}" appears twice`);
      const key = Buffer.from(colon < 0 ? entry : entry.slice(colon + 1), 'base64');
      if (key.length !== 32) throw new Error(`${setting}: the key "${id}" must be 32 bytes, base64-encoded`);
      keys.set(id, key);
      current ??= id;
    }
    return new Keyring(keys, current!);
  }

  /** A keyring of one key (tests, and code that has a bare key). */
  static of(key: Buffer, id = LEGACY_KEY_ID): Keyring {
    return new Keyring(new Map([[id, key]]), id);
  }

  get ids(): string[] {
    return [...this.keys.keys()];
  }

  /** Seals under the current key. */
  seal(plain: Buffer): string {
    const body = seal(plain, this.keys.get(this.currentId)!);
    return this.currentId === LEGACY_KEY_ID ? body : `${this.currentId}.${body}`;
  }

  /** Opens a value sealed under any key of the ring; throws naming the key id when the ring lacks it. */
  open(sealed: string): Buffer {
    const id = sealedKeyId(sealed);
    const key = this.keys.get(id);
    if (!key) throw new Error(`sealed under the key "${id}", which is not configured`);
    return unseal(id === LEGACY_KEY_ID ? sealed : sealed.slice(id.length + 1), key);
  }

  /** Whether a stored value is sealed under the current key (else the re-seal job moves it). */
  isCurrent(sealed: string): boolean {
    return sealedKeyId(sealed) === this.currentId;
  }

  /** The value sealed under the current key: itself if it already is. */
  reseal(sealed: string): string {
    return this.isCurrent(sealed) ? sealed : this.seal(this.open(sealed));
  }
}
