import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Secrets a service must use later (signing keys, webhook secrets) cannot be
// hashed; they are kept encrypted with AES-256-GCM under a key from config.

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
