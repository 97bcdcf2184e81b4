import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The SDK's package.json as published, read without a build (the built package itself is checked by
// test/deploy/sdk-package.test.ts): each condition of its exports map names declarations of its own
// module kind next to its code.
const client = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(client, 'package.json'), 'utf8'));

describe('the SDK package manifest', () => {
  it('each condition names declarations next to its own code', () => {
    const { import: esm, require: cjs } = manifest.exports['.'];
    expect(esm.types).toBe(esm.default.replace(/\.js$/, '.d.ts'));
    expect(cjs.types).toBe(cjs.default.replace(/\.js$/, '.d.ts'));
    expect(manifest.types).toBe(cjs.types);
  });
});
