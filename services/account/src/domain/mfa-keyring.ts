import { hkdfSync } from 'node:crypto';
import { Keyring } from '@licensing/runtime';
import type { Peppers } from './api-key';

// A TOTP secret must be read again to check a code, so it cannot be hashed: it is sealed (AES-256-GCM)
// under a key derived from API_KEY_PEPPER, the account service's one server secret. Each pepper
// version gives its own key, under the same id, so rotating the pepper rotates these too: a secret
// sealed under an old version opens while that version is configured.

const INFO = 'licensing/account/totp-secret';

export function mfaKeyring(peppers: Peppers): Keyring {
  const spec = peppers.all
    .map(({ id, pepper }) => {
      const key = Buffer.from(hkdfSync('sha256', pepper, Buffer.alloc(0), INFO, 32)).toString('base64');
      return `${id}:${key}`;
    })
    .join(',');
  return Keyring.parse(spec, 'API_KEY_PEPPER');
}
