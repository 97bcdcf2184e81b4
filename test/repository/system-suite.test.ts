import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The system suite holds only what the whole system shows (docs/architecture.md, "Tests"): at most 20
// files, each saying at its top why it starts a stack of its own. Every end-to-end file has a plan for
// where its cases go (docs/testing-map.md), so the tier only shrinks.

const root = join(__dirname, '..', '..');
const testsIn = (folder: string) =>
  readdirSync(join(root, folder))
    .filter((name) => name.endsWith('.test.ts'))
    .sort();

const MAX_SYSTEM_FILES = 20;

it(`test/system holds at most ${MAX_SYSTEM_FILES} files`, () => {
  expect(testsIn('test/system').length).toBeLessThanOrEqual(MAX_SYSTEM_FILES);
  expect(testsIn('test/system').length).toBeGreaterThan(0);
});

it('each system file that starts a stack of its own says why near its top', () => {
  const silent = testsIn('test/system').filter((name) => {
    const top = readFileSync(join(root, 'test/system', name), 'utf8')
      .split('\n')
      .slice(0, 40)
      .join('\n');
    return !/^\/\/ Own stack: \S/m.test(top);
  });
  expect(silent).toEqual([]);
});

it('every end-to-end file is in docs/testing-map.md, and the map names no file that is gone', () => {
  const map = readFileSync(join(root, 'docs', 'testing-map.md'), 'utf8');
  const listed = [...map.matchAll(/^\| ([a-z0-9]+(?:-[a-z0-9]+)*) \|/gm)].map((m) => m[1]).sort();
  const files = testsIn('test/e2e')
    .map((name) => name.replace(/\.test\.ts$/, ''))
    .sort();
  expect(listed).toEqual(files);
});
