import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// package.json says Apache-2.0: the text itself ships with the project and with the SDK's package
// (npm packs a LICENSE file whatever "files" lists).
const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('the project licence', () => {
  it.each([
    ['LICENSE', 'package.json'],
    ['packages/client/LICENSE', 'packages/client/package.json'],
  ])('%s holds the Apache License 2.0 that %s names', (file, manifest) => {
    expect(JSON.parse(read(manifest)).license).toBe('Apache-2.0');
    const text = read(file);
    expect(text.trimStart().startsWith('Apache License')).toBe(true);
    expect(text).toContain('Version 2.0, January 2004');
    expect(text).toContain('TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
    // Sections 1 to 9, each once.
    for (let n = 1; n <= 9; n++) expect(text.match(new RegExp(`^\\s*${n}\\. [A-Z]`, 'gm'))).toHaveLength(1);
  });
});
