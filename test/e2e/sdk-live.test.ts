import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { useSharedStack } from '../support/shared-stack';

// Every library of the app's side against a whole running system, through the conformance command
// (docs/sdk-conformance.md), with the licence key alone: activate a floating seat, validate with an
// entitlement, heartbeat, fetch a licence file bound to the machine and verify it offline against the
// product's public keys, deactivate; and a refusal carries its code and next_action.

const root = join(__dirname, '..', '..');
const LANGUAGES = ['typescript', 'go', 'python', 'java'] as const;
const run = promisify(execFile);
const f = useSharedStack();
let productId: string;
let scratch: string;

/** The command's exit status and JSON answer; asynchronous, so the stack in this process keeps serving. */
async function conformance(...args: string[]): Promise<{ code: number; out: any }> {
  try {
    const { stdout } = await run(join(root, 'sdks', 'conformance'), args, { cwd: root });
    return { code: 0, out: JSON.parse(stdout) };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    if (!err.stdout?.trim()) throw new Error(`conformance ${args.join(' ')} printed nothing: ${err.stderr}`);
    return { code: err.code ?? -1, out: JSON.parse(err.stdout) };
  }
}

beforeAll(async () => {
  const product = await f.api('POST', '/api/v1/products', {
    name: 'App in any language',
    policy: { lease_seconds: 60, max_activations: 2, require_activation: true, entitlements: ['pdf-export'] },
  });
  productId = product.body.id;
  scratch = mkdtempSync(join(tmpdir(), 'sdk-live-'));
  const keys = await f.api('GET', `/api/v1/products/${productId}/signing-keys`);
  writeFileSync(join(scratch, 'keys.json'), JSON.stringify(keys.body));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

it.each(LANGUAGES)(
  '%s: activate, validate, heartbeat, fetch and verify a file, deactivate',
  async (language) => {
    const key = (await f.api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'ada@example.com' }))
      .body.license_key as string;
    const as = ['--base-url', f.stack.url, '--license-key', key];
    const fingerprint = `${language}-machine`;

    // Not activated yet: a refusal with its code, exit 1.
    const before = await conformance(language, 'validate', ...as, '--fingerprint', fingerprint);
    expect(before).toMatchObject({ code: 1, out: { valid: false, code: 'not_activated', next_action: 'activate' } });

    const activated = await conformance(language, 'activate', ...as, '--fingerprint', fingerprint);
    expect(activated.code).toBe(0);
    const activationId = activated.out.activation_id as string;
    expect(activationId).toMatch(/^act_/);

    const valid = await conformance(
      language,
      'validate',
      ...as,
      '--fingerprint',
      fingerprint,
      '--entitlement',
      'pdf-export',
    );
    expect(valid).toMatchObject({ code: 0, out: { valid: true, code: 'valid' } });
    const missing = await conformance(
      language,
      'validate',
      ...as,
      '--fingerprint',
      fingerprint,
      '--entitlement',
      'sync',
    );
    expect(missing).toMatchObject({
      code: 1,
      out: { valid: false, code: 'entitlements_missing', next_action: 'contact_vendor' },
    });

    const beat = await conformance(language, 'heartbeat', ...as, '--activation-id', activationId);
    expect(beat).toMatchObject({ code: 0, out: { activation_id: activationId } });
    expect(Date.parse(beat.out.lease_expires_at)).toBeGreaterThan(Date.now());

    const fetched = await conformance(language, 'fetch-file', ...as, '--fingerprint', fingerprint);
    expect(fetched.code).toBe(0);
    const file = join(scratch, `${language}-file.json`);
    writeFileSync(file, JSON.stringify(fetched.out));
    const verified = await conformance(
      language,
      'verify-file',
      '--public-keys',
      join(scratch, 'keys.json'),
      '--file',
      file,
      '--fingerprint',
      fingerprint,
    );
    expect(verified).toMatchObject({
      code: 0,
      out: { valid: true, code: 'valid', payload: { license_key: key, fingerprint } },
    });

    expect(await conformance(language, 'deactivate', ...as, '--activation-id', activationId)).toMatchObject({
      code: 0,
      out: { deactivated: true },
    });
    const after = await conformance(language, 'validate', ...as, '--fingerprint', fingerprint);
    expect(after.out).toMatchObject({ valid: false, code: 'not_activated' });
  },
  300_000,
);
