import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { eventTypes } from '@licensing/proto';
import { ownerOf } from '@licensing/runtime';
import { components, services } from '../../scripts/lib/components';

// docs/architecture.md says what each service owns and publishes and how a service's src/ is laid
// out; these checks hold it to the code, so the description cannot drift from what is there.

const root = join(__dirname, '../..');
const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');

/** A service's bullet under "Pieces and who owns what": from `- **Title**` to the next bullet. */
function bulletOf(title: string): string {
  const start = doc.indexOf(`- **${title}**`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n- **', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The names in backquotes after "Publishes", with `a.b|c` read as `a.b` and `a.c`. */
function publishedIn(bullet: string): string[] {
  const sentence = bullet.slice(bullet.indexOf('Publishes'));
  return [...sentence.matchAll(/`([a-z_]+)\.([a-z_|]+)`/g)].flatMap(([, family, types]) =>
    types.split('|').map((t) => `${family}.${t}`),
  );
}

/** A service's store/ folders: its own, and each module's (a folder of src/ with its own README.md). */
function storesOf(folder: string): string[] {
  const src = join(root, folder, 'src');
  const modules = readdirSync(src, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(src, e.name, 'README.md')))
    .map((e) => join(src, e.name, 'store'));
  return [join(src, 'store'), ...modules].filter((d) => existsSync(d));
}

/** The collections a service's stores declare (and the runtime's idempotency records where it uses them). */
function collectionsOf(folder: string): string[] {
  const names: string[] = [];
  for (const store of storesOf(folder))
    for (const file of readdirSync(store).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(store, file), 'utf8');
      for (const [, name] of text.matchAll(/collection: '([a-z_]+)'/g)) names.push(name);
      if (text.includes('idempotencyModel(')) names.push('idempotency_keys');
    }
  return names.sort();
}

describe('docs/architecture.md, against the code', () => {
  describe.each(services.map((s) => [s.title, s] as const))('%s', (title, s) => {
    it('names every event type the service owns after "Publishes", and no other', () => {
      const owned = eventTypes.filter((t) => ownerOf(t) === s.name);
      // A service that only consumes (the notification service) says so.
      if (owned.length === 0) expect(bulletOf(title)).toContain('Publishes nothing');
      else expect(publishedIn(bulletOf(title)).sort()).toEqual([...owned].sort());
    });

    it("names every collection of the service's store", () => {
      const bullet = bulletOf(title);
      const collections = collectionsOf(s.folder);
      expect(collections.length).toBeGreaterThan(0);
      expect(collections.filter((c) => !bullet.includes(`\`${c}\``))).toEqual([]);
    });
  });

  it("describes every folder and top-level file of the services' src/", () => {
    const start = doc.indexOf("Every service's `src/` has the same layout");
    expect(start).toBeGreaterThanOrEqual(0);
    const layout = doc.slice(start, doc.indexOf('\n\n', start));
    const entries = new Set(
      services.flatMap((s) =>
        readdirSync(join(root, s.folder, 'src'), { withFileTypes: true }).map((e) =>
          e.isDirectory() ? `${e.name}/` : e.name,
        ),
      ),
    );
    expect([...entries].filter((e) => !layout.includes(`\`${e}\``))).toEqual([]);
  });

  it('keeps timers out of the stores: what runs on a timer is in jobs/', () => {
    const timed = services.flatMap((s) =>
      storesOf(s.folder).flatMap((store) =>
        readdirSync(store)
          .filter((f) => /PeriodicTask|setInterval|setTimeout/.test(readFileSync(join(store, f), 'utf8')))
          .map((f) => join(store, f).slice(root.length + 1)),
      ),
    );
    expect(timed).toEqual([]);
  });
  describe('each component owns its tests ("Tests")', () => {
    const workspaces = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces as string[]).flatMap(
      (w) =>
        w.endsWith('/*')
          ? readdirSync(join(root, w.slice(0, -2)), { withFileTypes: true })
              .filter((e) => e.isDirectory())
              .map((e) => `${w.slice(0, -2)}/${e.name}`)
          : [w],
    );
    const testFilesUnder = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        if (e.name === 'node_modules' || e.name === 'dist') return [];
        const path = join(dir, e.name);
        if (e.isDirectory()) return testFilesUnder(path);
        return e.name.endsWith('.test.ts') ? [relative(root, path)] : [];
      });

    it('the section states the layout', () => {
      const start = doc.indexOf('### Tests');
      expect(start).toBeGreaterThanOrEqual(0);
      const section = doc.slice(start, doc.indexOf('\n## ', start));
      for (const folder of ['<component>/test/unit/', '<component>/test/component/', 'test/repository/'])
        expect(section).toContain(`\`${folder}\``);
    });

    it.each(workspaces)('%s: tests only in test/unit/ (no server) and test/component/ (servers)', (folder) => {
      const misplaced = testFilesUnder(join(root, folder)).filter(
        (f) => !f.startsWith(`${folder}/test/unit/`) && !f.startsWith(`${folder}/test/component/`),
      );
      expect(misplaced).toEqual([]);
      const tests = join(root, folder, 'test');
      if (existsSync(tests)) expect(readdirSync(tests).filter((n) => n !== 'unit' && n !== 'component')).toEqual([]);
    });

    it.each(components.map((c) => [c.folder]))('%s has unit tests of its own', (folder) => {
      const unit = join(root, folder, 'test', 'unit');
      expect(existsSync(unit) && testFilesUnder(unit).length > 0).toBe(true);
    });
  });
});
