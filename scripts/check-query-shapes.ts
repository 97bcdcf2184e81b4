// Part of `npm test`: every query shape the services sent to their stores
// during the test run (recorded by runtime/store/query-shapes.ts) must be served by
// an index its model declares, so production on MongoDB never scans.
//   node scripts/dist/check-query-shapes.js <dir>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { QueryShape } from '@licensing/runtime';
import { uncovered, type Index } from './lib/index-coverage';

const dir = process.argv[2];
const shapes = new Map<string, QueryShape>();
const declared = new Map<string, Index[]>();
for (const file of readdirSync(dir)) {
  for (const line of readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)) {
    const entry = JSON.parse(line) as { shape?: QueryShape; declared?: { collection: string; indexes: Index[] } };
    if (entry.shape) shapes.set(JSON.stringify(entry.shape), entry.shape);
    if (entry.declared) declared.set(entry.declared.collection, entry.declared.indexes);
  }
}
const bad = uncovered([...shapes.values()], declared);
const collections = new Set([...shapes.values()].map((s) => s.collection));
if (bad.length) {
  console.error(
    `index coverage: ${bad.length} of ${shapes.size} query shapes have no declared index (add one to the model's schema):`,
  );
  for (const s of bad)
    console.error(`  ${s.collection}.${s.method} filter ${JSON.stringify(s.filter)} sort ${JSON.stringify(s.sort)}`);
  process.exit(1);
}
console.log(
  `index coverage: all ${shapes.size} query shapes of ${collections.size} collections are served by declared indexes`,
);
