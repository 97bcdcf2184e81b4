import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The unit tier runs alone, with no server started or reachable (`npm run test:unit`); the other
// tiers get the global set-up that checks NATS and Redis and starts FerretDB and stripe-mock.
// `npm test` runs the unit tier first the same way, so a unit test that needs a server fails there.

const root = join(__dirname, '..', '..');
// jest's configuration is a CommonJS module.
const config = require(join(root, 'jest.config.js')) as {
  projects: Array<{ displayName: string; roots: string[]; globalSetup?: string; globalTeardown?: string }>;
};
const byName = new Map((config.projects ?? []).map((p) => [p.displayName, p]));
const SERVER_SETUP = '<rootDir>/test/support/global-setup.ts';

describe('test tiers', () => {
  it('every folder of test/ but support/ is a jest project of its own name', () => {
    const folders = readdirSync(join(root, 'test'), { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name !== 'support')
      .map((d) => d.name)
      .sort();
    expect([...byName.keys()].sort()).toEqual(folders);
    for (const [name, project] of byName) expect(project.roots).toEqual([`<rootDir>/test/${name}`]);
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

  it('npm run test:unit and the first step of npm test run the unit tier with no server reachable', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test:unit']).toBe('node scripts/run.mjs test:unit');
    const runner = readFileSync(join(root, 'scripts', 'run.mjs'), 'utf8');
    const unitRuns = runner.match(/jest\(\[[^\]]*'--selectProjects', 'unit'\][^\n]*/g) ?? [];
    expect(unitRuns).toHaveLength(2);
    for (const line of unitRuns) expect(line).toContain('await withoutServers()');
  });
});
