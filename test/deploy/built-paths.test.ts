import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { docs, isBuilt, packageEntries, pathsNamedBy, root } from '../support/repo-paths';

// After the build (`npm test` builds before this tier), every built file the docs and the package.json
// entries name exists: the unit tier checks only that their sources exist (it runs with nothing built).

it('every dist/ path the docs name exists once built', () => {
  const named = docs().flatMap((doc) =>
    pathsNamedBy(doc)
      .filter(isBuilt)
      .map((path) => ({ doc, path })),
  );
  expect(named.length).toBeGreaterThan(0);
  expect(named.filter((n) => !existsSync(join(root, n.path))).map((n) => `${n.doc}: ${n.path}`)).toEqual([]);
});

it('every package.json types and main entry exists once built', () => {
  const entries = packageEntries();
  expect(entries.filter((e) => isBuilt(e.path)).length).toBeGreaterThan(5);
  expect(entries.filter((e) => !existsSync(join(root, e.path))).map((e) => `${e.manifest}: ${e.path}`)).toEqual([]);
});
