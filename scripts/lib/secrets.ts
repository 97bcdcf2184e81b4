import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface LocalSecrets {
  internal_token: string;
  api_key_pepper: string;
  signing_key_secret: string;
  webhook_secret_key: string;
}

/**
 * Development secrets, made once and kept in the data folder (mode 600) so API
 * keys survive restarts. Production passes INTERNAL_TOKEN and API_KEY_PEPPER
 * in the environment and never uses this file.
 */
export function localSecrets(file: string): LocalSecrets {
  const fresh: LocalSecrets = {
    internal_token: randomBytes(32).toString('base64url'),
    api_key_pepper: randomBytes(32).toString('base64url'),
    signing_key_secret: randomBytes(32).toString('base64'),
    webhook_secret_key: randomBytes(32).toString('base64'),
  };
  if (existsSync(file)) {
    // Older files lack newer secrets: add them, keep the rest (changing them would break keys).
    const known = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalSecrets>;
    if (Object.keys(fresh).every((k) => k in known)) return known as LocalSecrets;
    const merged = { ...fresh, ...known };
    writeFileSync(file, JSON.stringify(merged, null, 2), { mode: 0o600 });
    return merged;
  }
  const secrets = fresh;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/**
 * Development and tests: each component's own internal token, derived from one
 * seed so a single secret file is enough. Production gives each component a
 * random token of its own (deploy/make-secrets.sh) and no component sees the seed.
 */
export const componentToken = (seed: string, component: string): string =>
  createHmac('sha256', seed).update(`internal-token:${component}`).digest('base64url');
