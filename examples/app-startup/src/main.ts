// The example app's entry point: check the licence, then start or refuse.
//   LICENSING_URL=https://licensing.example.com LICENSING_API_KEY=lk_val_… LICENSE_KEY=XXXXX-… \
//   PRODUCT_ID=prod_… LICENSE_FILE=license.json PUBLIC_KEYS=public-keys.json node dist/main.js
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicensingClient, type PublicKeyInput } from '@licensing/client';
import { FileAnswerCache } from './answer-cache';
import { checkLicense, type GateResult } from './license-gate';

type Env = Record<string, string | undefined>;

/** Runs the check with settings from `env`; answers the process exit code. */
export async function main(env: Env, print: (line: string) => void = console.log): Promise<number> {
  const missing = ['LICENSING_URL', 'LICENSING_API_KEY', 'LICENSE_KEY'].filter((name) => !env[name]);
  if (missing.length) {
    print(`set ${missing.join(', ')} (see examples/app-startup/README.md)`);
    return 2;
  }
  const client = new LicensingClient({
    baseUrl: env.LICENSING_URL!,
    apiKey: env.LICENSING_API_KEY!,
    timeoutMs: 5_000,
    maxRetries: 1,
  });
  const publicKeys = env.PUBLIC_KEYS ? await readPublicKeys(env.PUBLIC_KEYS) : undefined;
  const licenseFile = env.LICENSE_FILE;
  const result: GateResult = await checkLicense({
    client,
    licenseKey: env.LICENSE_KEY!,
    productId: env.PRODUCT_ID,
    fingerprint: env.MACHINE_FINGERPRINT ?? machineFingerprint(),
    cache: new FileAnswerCache(env.LICENSE_CACHE ?? join(tmpdir(), 'app-startup-license.json')),
    offline:
      licenseFile && publicKeys
        ? { licenseFile: async () => JSON.parse(await readFile(licenseFile, 'utf8')), publicKeys }
        : undefined,
  });
  if (!result.allowed) {
    print(`Licence refused (${result.code}, from ${result.source}): ${result.detail}`);
    return 1;
  }
  print(
    `Licence OK (from ${result.source}${result.expiresAt ? `, expires ${result.expiresAt}` : ''}). Starting the app.`,
  );
  return 0;
}

/** The product's public keys as GET /products/{id}/signing-keys answered them ({data: [...]}) or just the array. */
async function readPublicKeys(path: string): Promise<PublicKeyInput[]> {
  const raw = JSON.parse(await readFile(path, 'utf8')) as PublicKeyInput[] | { data: PublicKeyInput[] };
  return Array.isArray(raw) ? raw : raw.data;
}

/** A stable id of this machine that reveals nothing about it. */
function machineFingerprint(): string {
  return createHash('sha256').update(hostname()).digest('hex').slice(0, 32);
}

if (require.main === module) {
  main(process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
