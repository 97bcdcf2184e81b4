// Writes test/support/file-durations.json, the seconds each test file took, from a jest JSON report of a
// whole run (`npx jest --json --outputFile=report.json`, or the servers' tiers alone): the order a fresh
// clone starts files in (test/support/sequencer.js). Files under 3 s are left out (their size guesses them well enough).
// Usage: node scripts/test-durations.mjs <report.json>
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [reportPath] = process.argv.slice(2);
if (!reportPath) {
  console.error('usage: node scripts/test-durations.mjs <jest JSON report>');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const seconds = report.testResults
  .map((r) => [relative(root, r.name).split('\\').join('/'), Math.round((r.endTime - r.startTime) / 1000)])
  .filter(([, s]) => s >= 3)
  .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
const out = join(root, 'test', 'support', 'file-durations.json');
writeFileSync(out, `${JSON.stringify(Object.fromEntries(seconds), null, 2)}\n`);
console.log(`${seconds.length} files written to ${relative(root, out)}`);
