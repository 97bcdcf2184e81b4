import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// Every library of the app's side (docs/sdk-conformance.md) answers every test vector
// (sdks/test-vectors) through the one conformance command, and the command keeps its contract: one
// JSON line, exit 0 for a valid answer, 1 for an invalid one, 2 for a usage error. Needs no server;
// lives with the tiers that run after the build (the TypeScript library runs from its dist/, Go and
// Java are compiled by the command itself).

const root = join(__dirname, '..', '..');
const command = join(root, 'sdks', 'conformance');
const vectorsDir = join(root, 'sdks', 'test-vectors');
const LANGUAGES = ['typescript', 'go', 'python', 'java'] as const;
const run = promisify(execFile);

/** The command's answer: its exit status and the JSON it printed (null when it printed none). */
async function conformance(...args: string[]): Promise<{ code: number; out: any; err: string }> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: root, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, out: JSON.parse(stdout), err: stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    const text = err.stdout?.trim();
    return { code: err.code ?? -1, out: text ? JSON.parse(text) : null, err: err.stderr ?? '' };
  }
}

const files = JSON.parse(readFileSync(join(vectorsDir, 'license-files.json'), 'utf8'));
const webhooks = JSON.parse(readFileSync(join(vectorsDir, 'webhooks.json'), 'utf8'));
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'sdk-conformance-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe.each(LANGUAGES)('%s', (language) => {
  // The first call of a language may compile it (Go, Java): a generous time for that one.
  it('passes every test vector', async () => {
    const { code, out, err } = await conformance(language, 'vectors', '--dir', vectorsDir);
    expect({ failed: out?.failed, err: code === 0 ? '' : err }).toEqual({ failed: [], err: '' });
    expect(out.passed).toBe(files.cases.length + webhooks.cases.length + 20);
    expect(code).toBe(0);
  }, 300_000);

  it('verifies a file and a webhook through the single commands, exit 0 when valid and 1 when not', async () => {
    const valid = files.cases.find((c: any) => c.name === 'node-locked, on its machine');
    const keys = join(scratch, `${language}-keys.json`);
    const file = join(scratch, `${language}-file.json`);
    writeFileSync(keys, JSON.stringify({ data: files.key_sets[valid.key_set] }));
    writeFileSync(file, JSON.stringify(valid.file));
    const args = ['verify-file', '--public-keys', keys, '--file', file, '--now', valid.now];
    expect(await conformance(language, ...args, '--fingerprint', 'machine-7f3a')).toMatchObject({
      code: 0,
      out: { valid: true, code: 'valid', payload: valid.expect.payload },
    });
    expect(await conformance(language, ...args, '--fingerprint', 'elsewhere')).toMatchObject({
      code: 1,
      out: { valid: false, code: 'fingerprint_mismatch', payload: null },
    });
    const hook = webhooks.cases.find((c: any) => c.name === 'tampered body');
    const body = join(scratch, `${language}-body.json`);
    writeFileSync(body, hook.body);
    const hookArgs = [
      '--secret',
      hook.secret,
      '--id',
      hook.id,
      '--timestamp',
      hook.timestamp,
      '--signature',
      hook.signature,
    ];
    expect(
      await conformance(language, 'verify-webhook', ...hookArgs, '--body-file', body, '--now', String(hook.now)),
    ).toMatchObject({
      code: 1,
      out: { valid: false, code: 'bad_signature' },
    });
  }, 120_000);

  it('checks a key, and refuses a usage error with exit 2', async () => {
    expect(await conformance(language, 'check-key', ' 7k3qf-9xw2m-t0rbh-pz4dn-c8e1v-q3atg ')).toMatchObject({
      code: 0,
      out: { well_formed: true, normalized: '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG', kind: 'native' },
    });
    expect(await conformance(language, 'check-key', '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATZ')).toMatchObject({
      code: 1,
      out: { well_formed: false, reason: 'checksum' },
    });
    expect((await conformance(language, 'no-such-command')).code).toBe(2);
    expect((await conformance(language, 'verify-file', '--file')).code).toBe(2);
  }, 120_000);
});
