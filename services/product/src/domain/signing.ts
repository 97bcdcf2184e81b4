import { createCipheriv, createDecipheriv, createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { AppError } from '@licensing/runtime';

// Licence-file signing keys: Ed25519, one current per product, older ones kept
// (by kid) so files they signed keep verifying. The private key is stored
// encrypted with AES-256-GCM under a key from configuration.
export const ALGORITHM = 'Ed25519';

export interface SealedKey {
  public_key_pem: string;
  /** base64url of iv (12) | tag (16) | ciphertext of the PKCS#8 DER private key */
  private_key_sealed: string;
}

export function masterKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('SIGNING_KEY_SECRET must be 32 bytes, base64-encoded');
  return key;
}

export function newSigningKey(master: Buffer): SealedKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', master, iv);
  const sealed = Buffer.concat([cipher.update(der), cipher.final()]);
  return {
    public_key_pem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    private_key_sealed: Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url'),
  };
}

export function signWith(sealedKey: string, master: Buffer, data: Buffer): Buffer {
  const raw = Buffer.from(sealedKey, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', master, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  const der = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
  return sign(null, data, createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
}

/** The payload the licence service sends must be a small JSON object; the kid is ours to set. */
export function payloadWithKid(json: string, kid: string): Buffer {
  if (json.length > 8192) throw AppError.invalid('payload', 'the payload is too large');
  let payload: unknown;
  try {
    payload = JSON.parse(json);
  } catch {
    throw AppError.invalid('payload', 'the payload is not JSON');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw AppError.invalid('payload', 'the payload must be a JSON object');
  return Buffer.from(JSON.stringify({ ...payload, kid }));
}
