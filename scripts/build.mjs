// Transpiles every workspace's TypeScript to CommonJS under its own dist/ with
// swc (fast, no type checking: `npm run typecheck` does that with tsc).
import { transformFile } from '@swc/core';
import { mkdir, readdir, writeFile, rm } from 'node:fs/promises';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// workspace folder -> source roots inside it (output keeps paths relative to `strip`)
const units = [
  { dir: 'proto', sources: ['index.ts', 'events.ts', 'gen'], strip: '' },
  { dir: 'packages/runtime', sources: ['src'], strip: 'src' },
  { dir: 'services/account', sources: ['src'], strip: 'src' },
  { dir: 'services/product', sources: ['src'], strip: 'src' },
  { dir: 'services/license', sources: ['src'], strip: 'src' },
  { dir: 'services/checkout', sources: ['src'], strip: 'src' },
  { dir: 'services/webhook', sources: ['src'], strip: 'src' },
  { dir: 'gateway', sources: ['src'], strip: 'src' },
  { dir: 'scripts', sources: ['lib', 'admin.ts', 'start.ts', 'bench.ts', 'docs-gen.ts'], strip: '' },
];

async function* walk(path) {
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOTDIR') { yield path; return; }
    if (err.code === 'ENOENT') return;
    throw err;
  }
  for (const e of entries) yield* walk(join(path, e.name));
}

const swcOptions = {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'commonjs' },
  sourceMaps: true,
};

let count = 0;
for (const unit of units) {
  const base = join(root, unit.dir);
  const out = join(base, 'dist');
  await rm(out, { recursive: true, force: true });
  for (const src of unit.sources) {
    for await (const file of walk(join(base, src))) {
      if (!file.endsWith('.ts') || file.endsWith('.d.ts')) continue;
      const rel = relative(join(base, unit.strip), file).replace(/\.ts$/, '.js');
      const target = join(out, rel);
      const { code, map } = await transformFile(file, { ...swcOptions, sourceFileName: relative(dirname(target), file) });
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, `${code}\n//# sourceMappingURL=${rel.split('/').pop()}.map\n`);
      if (map) await writeFile(`${target}.map`, map);
      count++;
    }
  }
}
console.log(`built ${count} files`);
