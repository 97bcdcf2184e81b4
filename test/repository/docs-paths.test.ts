import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildsFromSource, docs, isBuilt, packageEntries, pathsNamedBy, root, tracked } from '../support/repo-paths';

// Every file path the docs name exists: a rename that forgets the docs fails here. A path into a built
// dist/ folder is checked by its source here (this tier runs on a fresh clone, nothing built); the built
// files themselves are checked by test/deploy/built-paths.test.ts, after the build.
const TOP = [
  'gateway',
  'services',
  'packages',
  'scripts',
  'deploy',
  'test',
  'proto',
  'docs',
  'examples',
  'sdks',
  '.ci',
];

/** A named path that is missing: a source file that does not exist, or a built one nothing builds from. */
const isMissing = (p: string) => (isBuilt(p) ? !buildsFromSource(p) : !existsSync(join(root, p)));

describe.each(docs())('%s', (doc) => {
  it('names only files and folders that exist (built ones: their source)', () => {
    expect(pathsNamedBy(doc).filter(isMissing)).toEqual([]);
  });
});

it('the check sees the paths the docs name', () => {
  const named = docs().flatMap(pathsNamedBy);
  expect(named.length).toBeGreaterThan(30);
  expect(named).toEqual(expect.arrayContaining(['docs/architecture.md', 'components.json', 'deploy/Dockerfile']));
  expect(named.filter(isBuilt)).toEqual(expect.arrayContaining(['gateway/dist/main.js']));
  expect(docs()).toEqual(expect.arrayContaining(['README.md', 'docs/operations.md', 'deploy/README.md']));
});

it('a built path counts as present only when the file it is built from exists', () => {
  expect(buildsFromSource('gateway/dist/main.js')).toBe(true);
  expect(buildsFromSource('packages/client/dist/cjs/index.d.ts')).toBe(true);
  expect(buildsFromSource('packages/runtime/dist/events/events-setup.js')).toBe(true);
  expect(buildsFromSource('proto/dist/index.js')).toBe(true);
  expect(buildsFromSource('gateway/dist/no-such-entry.js')).toBe(false);
  expect(buildsFromSource('services/nowhere/dist/main.js')).toBe(false);
});

/** A repository path with an extension, as code and comments name files: scripts/lib/net.ts, docs/api.md. */
const FILE_PATH = new RegExp(
  `(?<![\\w./-])(?:${TOP.filter((t) => !t.startsWith('.')).join('|')})/[\\w./-]+\\.(?:ts|mjs|js|md|ya?ml|sh|json|proto|conf)\\b`,
  'g',
);

it('code and comments name only files that exist (built dist/ output aside)', () => {
  const files = tracked('*.ts', '*.mjs', '*.js', '*.yaml', '*.yml', '*.sh', 'deploy/Dockerfile').filter(
    (f) => !f.startsWith('proto/gen/') && !f.includes('/generated/'),
  );
  const missing: string[] = [];
  let seen = 0;
  for (const f of files) {
    for (const [path] of readFileSync(join(root, f), 'utf8').matchAll(FILE_PATH)) {
      if (path.includes('/dist/')) continue;
      seen++;
      if (!existsSync(join(root, path))) missing.push(`${f}: ${path}`);
    }
  }
  expect(missing).toEqual([]);
  expect(seen).toBeGreaterThan(50); // the pattern still finds the paths
});

it('every package.json points at files that exist (types and main; built ones: their source)', () => {
  const entries = packageEntries();
  expect(entries.length).toBeGreaterThan(10);
  expect(entries.filter((e) => isMissing(e.path)).map((e) => `${e.manifest}: ${e.path}`)).toEqual([]);
});
