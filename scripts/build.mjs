// Transpiles every workspace's TypeScript to CommonJS under its own dist/ with
// swc (fast, no type checking: `npm run typecheck` does that with tsc).
// The published SDK (packages/client) is built twice, as ES modules and as
// CommonJS, and gets .d.ts declarations from tsc, as its package.json exports say.
import { transformFile } from '@swc/core';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, writeFile, rm } from 'node:fs/promises';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// workspace folder -> source roots inside it (output keeps paths relative to `strip`)
const units = [
  { dir: 'proto', sources: ['index.ts', 'events.ts', 'rules', 'gen'], strip: '' },
  { dir: 'packages/runtime', sources: ['src'], strip: 'src' },
  {
    dir: 'packages/client',
    sources: ['src'],
    strip: 'src',
    formats: [
      { sub: 'esm', module: { type: 'es6', resolveFully: true }, type: 'module' },
      { sub: 'cjs', module: { type: 'commonjs', resolveFully: true, exportInteropAnnotation: true }, type: 'commonjs' },
    ],
    declarations: 'tsconfig.build.json',
  },
  // Every service and the gateway: components.json, the one list of them (read here as plain JSON:
  // this runs on a fresh clone, before anything is built).
  ...JSON.parse(readFileSync(join(root, 'components.json'), 'utf8')).components.map((c) => ({
    dir: c.folder,
    sources: ['src'],
    strip: 'src',
  })),
  { dir: 'examples/app-startup', sources: ['src'], strip: 'src' },
  {
    dir: 'scripts',
    sources: [
      'lib',
      'admin.ts',
      'start.ts',
      'bench.ts',
      'bench-scale.ts',
      'bench-events.ts',
      'bench-heartbeat.ts',
      'bench-import.ts',
      'bench-downloads.ts',
      'check-query-shapes.ts',
      'docs-gen.ts',
    ],
    strip: '',
  },
];

async function* walk(path) {
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOTDIR') {
      yield path;
      return;
    }
    if (err.code === 'ENOENT') return;
    throw err;
  }
  for (const e of entries) yield* walk(join(path, e.name));
}

/** ES module declarations name files in full, as ESM resolution needs ('./client' becomes './client.js'). */
function withFullSpecifiers(text, dir) {
  return text.replace(/(from\s+|import\()(['"])(\.\.?\/[^'"]+?)\2/g, (whole, lead, quote, spec) => {
    if (spec.endsWith('.js')) return whole;
    const full = existsSync(join(dir, `${spec}.d.ts`))
      ? `${spec}.js`
      : existsSync(join(dir, spec, 'index.d.ts'))
        ? `${spec}/index.js`
        : spec;
    return `${lead}${quote}${full}${quote}`;
  });
}

const swcOptions = {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  sourceMaps: true,
};
const commonjs = [{ sub: '', module: { type: 'commonjs' } }];
const tsc = join(root, 'node_modules', '.bin', 'tsc');

let count = 0;
for (const unit of units) {
  const base = join(root, unit.dir);
  const dist = join(base, 'dist');
  await rm(dist, { recursive: true, force: true });
  for (const format of unit.formats ?? commonjs) {
    const out = join(dist, format.sub);
    // Marks the folder's .js files as ES modules or CommonJS whatever the package says.
    if (format.type) {
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'package.json'), `${JSON.stringify({ type: format.type })}\n`);
    }
    for (const src of unit.sources) {
      for await (const file of walk(join(base, src))) {
        if (!file.endsWith('.ts') || file.endsWith('.d.ts')) continue;
        const rel = relative(join(base, unit.strip), file).replace(/\.ts$/, '.js');
        const target = join(out, rel);
        // resolveFully (needed by ES modules: ./x becomes ./x.js) works only with a baseUrl.
        const jsc = format.module.resolveFully
          ? { ...swcOptions.jsc, baseUrl: join(base, unit.strip) }
          : swcOptions.jsc;
        const { code, map } = await transformFile(file, {
          ...swcOptions,
          jsc,
          module: format.module,
          sourceFileName: relative(dirname(target), file),
        });
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, `${code}\n//# sourceMappingURL=${rel.split('/').pop()}.map\n`);
        if (map) await writeFile(`${target}.map`, map);
        count++;
      }
    }
  }
  if (unit.declarations) {
    execFileSync(tsc, ['-p', join(base, unit.declarations)], { cwd: root, stdio: 'inherit' });
    // Each format gets its own copy of the declarations, read in that format's module kind (its folder's
    // package.json "type"): one set for both would be CommonJS types for the ESM entry ("masquerading as CJS").
    const types = join(base, 'dist', 'types');
    for (const format of unit.formats ?? [])
      for await (const file of walk(types)) {
        if (!file.endsWith('.d.ts')) continue;
        const target = join(base, 'dist', format.sub, relative(types, file));
        await mkdir(dirname(target), { recursive: true });
        const text = readFileSync(file, 'utf8');
        await writeFile(target, format.type === 'module' ? withFullSpecifiers(text, dirname(file)) : text);
      }
  }
}
console.log(`built ${count} files`);
