import { resealField, type Keyring, type ResealReport } from '@licensing/runtime';
import type { Model } from 'mongoose';
import type { SigningKeyDoc } from '../store/signing-keys';

// The re-seal job of SIGNING_KEY_SECRET (docs/operations.md, "Rotating secrets"): every signing key's
// sealed private key is moved to the keyring's current key. A signing key is never changed after it is
// written except here.

export const resealSigningKeys = (
  SigningKey: Model<SigningKeyDoc>,
  keyring: Keyring,
  progress: (line: Record<string, unknown>) => void,
): Promise<ResealReport> => resealField({ model: SigningKey, path: 'private_key_sealed', keyring, progress });
