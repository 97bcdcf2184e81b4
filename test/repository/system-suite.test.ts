import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The system suite holds only what the whole system shows (docs/architecture.md, "Tests"): at most 20
// files, each saying at its top why it starts a stack of its own (so does an end-to-end file that does not
// use the stack its jest worker's files share). Every end-to-end file has a plan for
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

/** Whether a file starts a whole system of its own (not the one its jest worker's files share). */
const startsItsOwnStack = (text: string) => /\b(startStack|useStack|useStackWithAccount)\(/.test(text);

it('each system or end-to-end file that starts a stack of its own says why near its top', () => {
  const silent = ['test/system', 'test/e2e'].flatMap((folder) =>
    testsIn(folder)
      .map((name) => ({ name: `${folder}/${name}`, text: readFileSync(join(root, folder, name), 'utf8') }))
      .filter(({ text }) => startsItsOwnStack(text) || folder === 'test/system')
      .filter(({ text }) => !/^\/\/ Own stack: \S/m.test(text.split('\n').slice(0, 40).join('\n')))
      .map(({ name }) => name),
  );
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
