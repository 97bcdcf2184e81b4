import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

// The layering of the gateway, the web component and packages/runtime, as their app.ts and the runtime's index.ts declare
// it in their headers ("Layers, lowest first: a < b, c < d"), and the services' pure domain rules:
// - no file imports a file of a directory above its own (a folder gets what it needs from its
//   caller, never from the folder that composes it);
// - a folder imports only folders of lower layers (same-layer folders are independent);
// - the gateway's top level holds only its composition root and wiring;
// - a service's domain/ imports none of the folders that do I/O or call it.
// The order is read from those headers, so the test and the comment cannot drift; docs/architecture.md
// states it too, and is checked against them here.

const root = resolve(__dirname, '..', '..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORTS = [
  // import … from 'x', export … from 'x', import 'x': statements start a line (biome's layout), comments never do
  /^(?:import|export)\b[^;]*?\bfrom\s*(['"])([^'"]+)\1/gm,
  /^import\s*(['"])([^'"]+)\1/gm,
  // import('x'), require('x'), on a line that is not a comment
  /^(?!\s*(?:\/\/|\*|\/\*)).*?\b(?:import|require)\s*\(\s*(['"])([^'"]+)\1\s*\)/gm,
];

/** The files a file imports by relative path (import, export … from, import(), require()), resolved. */
function localImports(file: string): { spec: string; target: string }[] {
  const code = readFileSync(file, 'utf8');
  const specs = new Set(IMPORTS.flatMap((re) => [...code.matchAll(re)].map((m) => m[2])));
  return [...specs]
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => {
      const base = resolve(dirname(file), spec);
      const target = [`${base}.ts`, join(base, 'index.ts'), base].find((p) => existsSync(p) && statSync(p).isFile());
      if (!target) throw new Error(`${relative(root, file)}: cannot resolve ${spec}`);
      return { spec, target };
    });
}

/** "a < b, c < d" → each folder's rank (b and c share one). */
function layersIn(file: string): Map<string, number> {
  const m = /Layers, lowest first: ([^\n]+)/.exec(readFileSync(join(root, file), 'utf8'));
  if (!m) throw new Error(`${file} has no "Layers, lowest first:" line`);
  const ranks = new Map<string, number>();
  for (const [rank, group] of m[1].split('<').entries())
    for (const folder of group.split(',')) ranks.set(folder.trim().replace(/\.$/, ''), rank);
  return ranks;
}

const layerLine = (file: string) => /Layers, lowest first: ([^\n]+)/.exec(readFileSync(join(root, file), 'utf8'))![1];

/** Every break of the rules under `src`, as "importer → target: why". */
function layeringProblems(src: string, ranks: Map<string, number>): string[] {
  const problems: string[] = [];
  const top = (path: string) => {
    const rel = relative(src, path).split(sep);
    return rel.length === 1 ? '' : rel[0];
  };
  for (const file of filesUnder(src)) {
    const from = top(file);
    const name = relative(root, file);
    if (from && !ranks.has(from)) problems.push(`${name}: folder ${from} is in no layer`);
    for (const { spec, target } of localImports(file)) {
      const fromDir = dirname(file);
      const toDir = dirname(target);
      if (!target.startsWith(src + sep)) {
        // Outside the package's sources (its package.json): the composition root's business alone.
        if (from) problems.push(`${name} imports ${spec}: outside ${relative(root, src)}`);
        continue;
      }
      if (toDir !== fromDir && fromDir.startsWith(toDir + sep)) {
        problems.push(`${name} imports ${spec}: a file of a directory above its own`);
        continue;
      }
      const to = top(target);
      if (!from || from === to) continue; // the composition root may import anything; a folder its own files
      const [a, b] = [ranks.get(from), ranks.get(to)];
      if (a === undefined || b === undefined) continue; // reported above
      if (b >= a) problems.push(`${name} imports ${spec}: ${to} is not below ${from}`);
    }
  }
  return problems;
}

/** A service's modules: the folders of its src/ with a README.md of their own. */
const modulesOf = (src: string) =>
  readdirSync(src)
    .map((n) => join(src, n))
    .filter((p) => statSync(p).isDirectory() && existsSync(join(p, 'README.md')));

describe('layers', () => {
  const gateway = join(root, 'gateway', 'src');
  const runtime = join(root, 'packages', 'runtime', 'src');
  const web = join(root, 'web', 'src');

  it.each([
    ['gateway', gateway, 'gateway/src/app.ts'],
    ['web', web, 'web/src/app.ts'],
    ['packages/runtime', runtime, 'packages/runtime/src/index.ts'],
  ])(
    '%s: no import from a directory above, nor from a folder of a higher (or the same) layer',
    (_name, src, declared) => {
      const ranks = layersIn(declared);
      expect(ranks.size).toBeGreaterThan(3);
      // Every folder is placed: a new one must be given its layer.
      const folders = readdirSync(src).filter((n) => statSync(join(src, n)).isDirectory());
      expect(folders.filter((f) => !ranks.has(f))).toEqual([]);
      expect([...ranks.keys()].filter((f) => !folders.includes(f))).toEqual([]);
      expect(layeringProblems(src, ranks)).toEqual([]);
    },
  );

  it('docs/architecture.md states every order as the code declares it', () => {
    const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
    expect(doc).toContain(layerLine('gateway/src/app.ts'));
    expect(doc).toContain(layerLine('web/src/app.ts'));
    expect(doc).toContain(layerLine('packages/runtime/src/index.ts'));
  });

  it("the gateway's top level holds only its composition root (main.ts, app.ts) and wiring (config.ts)", () => {
    const files = readdirSync(gateway).filter((n) => statSync(join(gateway, n)).isFile());
    expect(files.sort()).toEqual(['app.ts', 'config.ts', 'main.ts']);
  });

  it('finds the breaks it is for (a parent-directory import, a higher layer, a same-layer neighbour)', () => {
    const ranks = new Map([
      ['low', 0],
      ['mid', 1],
      ['side', 1],
      ['high', 2],
    ]);
    const fixture = join(root, 'test', 'repository', 'fixtures', 'layers');
    expect(layeringProblems(fixture, ranks).sort()).toEqual([
      'test/repository/fixtures/layers/low/deep/below.ts imports ../../above: a file of a directory above its own',
      'test/repository/fixtures/layers/low/deep/below.ts imports ../base: a file of a directory above its own',
      'test/repository/fixtures/layers/low/up.ts imports ../mid/middle: mid is not below low',
      'test/repository/fixtures/layers/mid/middle.ts imports ../side/neighbour: side is not below mid',
    ]);
  });

  const services = readdirSync(join(root, 'services')).filter((s) => existsSync(join(root, 'services', s, 'src')));
  const IMPURE = ['store', 'use-cases', 'handlers', 'events', 'caches', 'jobs'];

  it.each(services)(
    '%s: domain/ imports nothing from store/, use-cases/, handlers/, events/, caches/ or jobs/',
    (service) => {
      const src = join(root, 'services', service, 'src');
      const problems: string[] = [];
      // The service's own domain/, and each module's (whose domain may use the core's pure rules only).
      for (const base of [src, ...modulesOf(src)]) {
        const domain = join(base, 'domain');
        for (const file of existsSync(domain) ? filesUnder(domain) : [])
          for (const { spec, target } of localImports(file)) {
            const rel = relative(src, target).split(sep);
            const inModule = modulesOf(src).some((m) => target.startsWith(m + sep));
            const folder = inModule ? rel[1] : rel[0];
            if (IMPURE.includes(folder)) problems.push(`${relative(root, file)} imports ${spec}`);
          }
      }
      expect(problems).toEqual([]);
    },
  );
});

describe('modules of a service', () => {
  // A module of a service (a folder of its src/ with its own README.md, e.g. the licence service's
  // transfer/): the service's inner layout again inside it, and one narrow door each way. It reaches the
  // service's core only through the core's pure rules (domain/) and the function table the core gives
  // it (use-cases/*-core.ts), never its store, caches, jobs, events or other use cases: so what the core
  // writes (a licence) is written in one place. The core reaches the module only from its composition
  // root (main.ts, config.ts).
  const MODULE_FOLDERS = ['domain', 'store', 'use-cases', 'jobs', 'handlers', 'events'];
  const MODULE_FILES = ['README.md', 'module.ts', 'config.ts', 'access.ts'];
  const services = readdirSync(join(root, 'services')).filter((s) => existsSync(join(root, 'services', s, 'src')));
  const withModules = services.flatMap((s) =>
    modulesOf(join(root, 'services', s, 'src')).map((m) => [s, relative(join(root, 'services', s, 'src'), m)] as const),
  );

  it('the licence service has its transfer module (imports, exports, licence batches)', () => {
    expect(withModules).toContainEqual(['license', 'transfer']);
  });

  it.each(withModules)(
    '%s/src/%s: laid out as a service is (folders by job, its composition root, a README)',
    (s, m) => {
      const dir = join(root, 'services', s, 'src', m);
      const entries = readdirSync(dir);
      expect(entries.filter((e) => !MODULE_FOLDERS.includes(e) && !MODULE_FILES.includes(e))).toEqual([]);
      expect(entries).toEqual(expect.arrayContaining(['README.md', 'module.ts']));
    },
  );

  it.each(withModules)('%s/src/%s: reaches the core only through domain/ and the use-cases/*-core.ts table', (s, m) => {
    const src = join(root, 'services', s, 'src');
    const dir = join(src, m);
    const problems: string[] = [];
    for (const file of filesUnder(dir))
      for (const { spec, target } of localImports(file)) {
        if (target.startsWith(dir + sep)) continue;
        const rel = relative(src, target).split(sep);
        const door = rel[0] === 'use-cases' && rel.length === 2 && rel[1].endsWith('-core.ts');
        if (rel[0] !== 'domain' && !door) problems.push(`${relative(root, file)} imports ${spec}`);
      }
    expect(problems).toEqual([]);
  });

  it.each(withModules)('%s: the core imports src/%s only from its composition root (main.ts, config.ts)', (s, m) => {
    const src = join(root, 'services', s, 'src');
    const dir = join(src, m);
    const problems: string[] = [];
    for (const file of filesUnder(src).filter((f) => !f.startsWith(dir + sep)))
      for (const { spec, target } of localImports(file))
        if (target.startsWith(dir + sep) && !['main.ts', 'config.ts'].includes(relative(src, file)))
          problems.push(`${relative(root, file)} imports ${spec}`);
    expect(problems).toEqual([]);
  });
});
