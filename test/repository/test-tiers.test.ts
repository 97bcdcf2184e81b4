import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The tests that need no server (every component's test/unit, test/repository) run alone, with no
// server started or reachable (`npm run test:unit`); the others get the global set-up that checks
// NATS and Redis and starts FerretDB and stripe-mock. `npm test` runs the server-free ones first the
// same way, so a unit test that needs a server fails there. `npm test -w <folder>` runs one
// component's test/unit and test/component the same two ways.

const root = join(__dirname, '..', '..');
// jest's configuration is a CommonJS module.
const config = require(join(root, 'jest.config.js')) as {
  projects: Array<{ displayName: string; roots: string[]; globalSetup?: string; globalTeardown?: string }>;
};
const byName = new Map((config.projects ?? []).map((p) => [p.displayName, p]));
const SERVER_SETUP = '<rootDir>/test/support/global-setup.ts';
/** The folders of test/ that need no server: roots of the `unit` project. */
const SERVERLESS = ['unit', 'repository'];

const read = (path: string) => readFileSync(join(root, path), 'utf8');
const folders = (dir: string) =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'node_modules')
    .map((d) => d.name);

/** Every workspace of package.json (a component, a package, an example), as its folder. */
const workspaces = (JSON.parse(read('package.json')).workspaces as string[]).flatMap((w) =>
  w.endsWith('/*') ? folders(w.slice(0, -2)).map((name) => `${w.slice(0, -2)}/${name}`) : [w],
);
const withTier = (tier: string) => workspaces.filter((w) => existsSync(join(root, w, 'test', tier)));

describe('test tiers', () => {
  it('every folder of test/ but support/ that needs servers is a jest project of its own name', () => {
    const tiers = folders('test').filter((name) => name !== 'support' && !SERVERLESS.includes(name));
    for (const name of tiers) expect(byName.get(name)?.roots).toEqual([`<rootDir>/test/${name}`]);
  });

  it("every component's test/unit (and test/repository, test/unit) is a root of `unit`, its test/component one of `component`", () => {
    const unitRoots = withTier('unit').map((w) => `<rootDir>/${w}/test/unit`);
    for (const name of SERVERLESS) if (existsSync(join(root, 'test', name))) unitRoots.push(`<rootDir>/test/${name}`);
    expect([...(byName.get('unit')?.roots ?? [])].sort()).toEqual(unitRoots.sort());
    const componentRoots = withTier('component').map((w) => `<rootDir>/${w}/test/component`);
    expect(componentRoots.length).toBeGreaterThan(0);
    expect([...(byName.get('component')?.roots ?? [])].sort()).toEqual(componentRoots.sort());
    // No other project: a folder of tests jest does not know would never run.
    const tiers = folders('test').filter((name) => name !== 'support' && !SERVERLESS.includes(name));
    expect([...byName.keys()].sort()).toEqual([...tiers, 'unit', 'component'].sort());
  });

  it('the unit tier has no global set-up or teardown: it starts nothing and needs no server', () => {
    const unit = byName.get('unit');
    expect(unit).toBeDefined();
    expect(unit?.globalSetup).toBeUndefined();
    expect(unit?.globalTeardown).toBeUndefined();
    expect((config as Record<string, unknown>).globalSetup).toBeUndefined(); // a top-level one would run for every tier
  });

  it('the tiers that talk to servers get the global set-up that provides them', () => {
    for (const [name, project] of byName) if (name !== 'unit') expect(project.globalSetup).toBe(SERVER_SETUP);
  });

  it('npm run test:unit and the first step of npm test run every project without a set-up, with no server reachable', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test:unit']).toBe('node scripts/run.mjs test:unit');
    const runner = read('scripts/run.mjs');
    expect(runner).toContain('const serverless = projects.filter((p) => !p.globalSetup)');
    const unitRuns = runner.match(/jest\(\[[^\]]*'--selectProjects', \.\.\.serverless\][^\n]*/g) ?? [];
    expect(unitRuns).toHaveLength(2);
    for (const line of unitRuns) expect(line).toContain('await withoutServers()');
  });

  it('npm test -w <folder> runs that folder alone: each workspace with tests has the test script that does it', () => {
    for (const folder of workspaces.filter((w) => existsSync(join(root, w, 'test')))) {
      const pkg = JSON.parse(read(`${folder}/package.json`)) as { scripts?: Record<string, string> };
      const up = folder
        .split('/')
        .map(() => '..')
        .join('/');
      expect(`${folder}: ${pkg.scripts?.test}`).toBe(`${folder}: node ${up}/scripts/run.mjs test:folder ${folder}`);
    }
    // Its unit tests run with no server reachable, as npm run test:unit runs them.
    expect(read('scripts/run.mjs')).toMatch(/\['unit', await withoutServers\(\)\]/);
  });
});
