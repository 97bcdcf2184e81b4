import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { AppError, Keyring } from '@licensing/runtime';

// Licence-file signing keys: Ed25519, one current per product, older ones kept
// (by kid) so files they signed keep verifying. The private key is stored
// encrypted with AES-256-GCM under the keyring of SIGNING_KEY_SECRET (its current key seals,
// every key opens; the re-seal job moves older ones to the current key).
export const ALGORITHM = 'Ed25519';

export interface SealedKey {
  public_key_pem: string;
  /** The PKCS#8 DER private key, sealed (runtime/security/sealed.ts) */
  private_key_sealed: string;
}

export const masterKey = (setting: string): Keyring => Keyring.parse(setting, 'SIGNING_KEY_SECRET');

export function newSigningKey(master: Keyring): SealedKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    public_key_pem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    private_key_sealed: master.seal(privateKey.export({ format: 'der', type: 'pkcs8' })),
  };
}

export function signWith(sealedKey: string, master: Keyring, data: Buffer): Buffer {
  return sign(null, data, createPrivateKey({ key: master.open(sealedKey), format: 'der', type: 'pkcs8' }));
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
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw AppError.invalid('payload', 'the payload must be a JSON object');
  return Buffer.from(JSON.stringify({ ...payload, kid }));
}
