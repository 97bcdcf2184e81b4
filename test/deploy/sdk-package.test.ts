import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

// The published SDK as Node and TypeScript resolve it, in the deploy tier because it needs the build
// (scripts/build.mjs, which `npm test` runs before this tier; its manifest alone is checked by the unit tier):
// require() and import() of the package each load their own entry, with the same named exports, which
// work; an ES module importing the CommonJS entry sees its named exports; and each entry has declarations
// of its own module kind whose relative imports resolve under ESM rules.
const client = join(__dirname, '..', '..', 'packages', 'client');
const manifest = JSON.parse(readFileSync(join(client, 'package.json'), 'utf8'));

const namesSeenByImport = (file: string): string[] =>
  JSON.parse(
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(file)}); console.log(JSON.stringify(Object.keys(m)))`,
      ],
      { encoding: 'utf8' },
    ),
  );

/**
 * What a user's program sees of the package by its name (`@licensing/client`, resolved through the
 * exports map from the repository, where npm workspaces link it): loaded with require() from CommonJS or
 * import() from an ES module, which file that resolved to, the named exports and their kinds, and
 * whether they work (a webhook signed here verifies, a LicensingError is one).
 */
function useOf(kind: 'require' | 'import'): {
  file: string;
  exports: Record<string, string>;
  webhook: unknown;
  error: boolean;
} {
  const load =
    kind === 'require'
      ? `const sdk = require('@licensing/client'); const file = require.resolve('@licensing/client');`
      : `const sdk = await import('@licensing/client'); const file = new URL(import.meta.resolve('@licensing/client')).pathname;`;
  const use = `
    const { createHmac } = await import('node:crypto');
    const secret = Buffer.from('a webhook signing secret of 32 b').toString('base64');
    const body = JSON.stringify({ id: 'evt_1', type: 'license.created', created_at: '2026-01-01T00:00:00Z', data: {} });
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac('sha256', Buffer.from(secret, 'base64')).update('msg_1.' + ts + '.' + body).digest('base64');
    const webhook = await sdk.verifyWebhook(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': 'v1,' + sig }, 'whsec_' + secret);
    const error = new sdk.LicensingError({ status: 404, code: 'not_found', message: 'x' }) instanceof Error;
    const exports = Object.fromEntries(Object.keys(sdk).filter((k) => k !== 'default' && k !== '__esModule').map((k) => [k, typeof sdk[k]]));
    console.log(JSON.stringify({ file, exports, webhook: { valid: webhook.valid, type: webhook.event && webhook.event.type }, error }));`;
  const script = kind === 'require' ? `${load} (async () => { ${use} })();` : `${load} ${use}`;
  const args = kind === 'require' ? ['-e', script] : ['--input-type=module', '-e', script];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', cwd: join(client, '..', '..') }));
}

describe('the SDK package', () => {
  it('require() and import() of @licensing/client load its own entry for each, with the same named exports, and they work', () => {
    const cjs = useOf('require');
    const esm = useOf('import');
    expect(cjs.file).toBe(join(client, manifest.exports['.'].require.default));
    expect(esm.file).toBe(join(client, manifest.exports['.'].import.default));
    expect(cjs.exports).toMatchObject({
      LicensingClient: 'function',
      LicensedApp: 'function',
      LicensingError: 'function',
      PageList: 'function',
      verifyWebhook: 'function',
      verifyLicenseFile: 'function',
      heartbeatIntervalMs: 'function',
      WEBHOOK_TOLERANCE_S: 'number',
    });
    expect(cjs.exports).toEqual(esm.exports);
    for (const used of [cjs, esm]) {
      expect(used.webhook).toEqual({ valid: true, type: 'license.created' });
      expect(used.error).toBe(true);
    }
  });

  it('import() of the CommonJS entry yields the same named exports as the ES module entry', () => {
    const esm = namesSeenByImport(join(client, manifest.exports['.'].import.default));
    const cjs = namesSeenByImport(join(client, manifest.exports['.'].require.default));
    expect(esm).toEqual(
      expect.arrayContaining(['LicensingClient', 'LicensedApp', 'verifyWebhook', 'verifyLicenseFile']),
    );
    expect(cjs).toEqual(expect.arrayContaining(esm));
  });

  it('the ES module declarations name every relative import in full', () => {
    const dir = join(client, 'dist', 'esm');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.d.ts'));
    expect(files.length).toBeGreaterThan(5);
    const bare = files.flatMap((f) =>
      [...readFileSync(join(dir, f), 'utf8').matchAll(/(?:from\s+|import\()['"](\.\.?\/[^'"]+)['"]/g)]
        .map((m) => m[1])
        .filter((spec) => !spec.endsWith('.js'))
        .map((spec) => `${f}: ${spec}`),
    );
    expect(bare).toEqual([]);
  });

  it('passes arethetypeswrong and publint as it would be published (npm pack)', () => {
    const bin = (name: string) => join(__dirname, '..', '..', 'node_modules', '.bin', name);
    const attw = JSON.parse(execFileSync(bin('attw'), ['--pack', client, '-f', 'json'], { encoding: 'utf8' }));
    expect(attw.analysis.problems).toEqual([]);
    // publint exits non-zero on errors; warnings and suggestions are printed: none are expected either.
    const lint = execFileSync(bin('publint'), [client], { encoding: 'utf8' });
    expect(lint).toContain('All good!');
  }, 60_000);
});
