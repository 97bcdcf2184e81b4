import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface LocalSecrets {
  internal_token: string;
  api_key_pepper: string;
}

/**
 * Development secrets, made once and kept in the data folder (mode 600) so API
 * keys survive restarts. Production passes INTERNAL_TOKEN and API_KEY_PEPPER
 * in the environment and never uses this file.
 */
export function localSecrets(file: string): LocalSecrets {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as LocalSecrets;
  const secrets = { internal_token: randomBytes(32).toString('base64url'), api_key_pepper: randomBytes(32).toString('base64url') };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}
