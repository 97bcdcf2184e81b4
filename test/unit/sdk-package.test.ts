import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

// The published SDK as Node and TypeScript resolve it (the build, scripts/build.mjs, ran before the tests):
// an ES module importing the CommonJS entry sees its named exports, and each entry has declarations of its
// own module kind whose relative imports resolve under ESM rules.
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

describe('the SDK package', () => {
  it('import() of the CommonJS entry yields the same named exports as the ES module entry', () => {
    const esm = namesSeenByImport(join(client, manifest.exports['.'].import.default));
    const cjs = namesSeenByImport(join(client, manifest.exports['.'].require.default));
    expect(esm).toEqual(
      expect.arrayContaining(['LicensingClient', 'LicensedApp', 'verifyWebhook', 'verifyLicenseFile']),
    );
    expect(cjs).toEqual(expect.arrayContaining(esm));
  });

  it('each condition names declarations next to its own code', () => {
    const { import: esm, require: cjs } = manifest.exports['.'];
    expect(esm.types).toBe(esm.default.replace(/\.js$/, '.d.ts'));
    expect(cjs.types).toBe(cjs.default.replace(/\.js$/, '.d.ts'));
    expect(manifest.types).toBe(cjs.types);
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
