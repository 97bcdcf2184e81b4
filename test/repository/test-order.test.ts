import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The order files start in (test/support/sequencer.js): longest first, from the committed table when jest
// has no timings of its own (a fresh clone), so a long file is never the last one started.

const root = join(__dirname, '..', '..');
const LongestFirst = require('../support/sequencer.js');
const table: Record<string, number> = JSON.parse(
  readFileSync(join(root, 'test', 'support', 'file-durations.json'), 'utf8'),
);

/** A test as jest hands it to a sequencer, in a context without a timing cache (as on a fresh clone). */
const testAt = (path: string, bytes = 1000) => ({
  path: join(root, path),
  context: { config: { cache: false }, hasteFS: { getSize: () => bytes } },
});

describe('the order test files start in', () => {
  it('starts the longest files of the committed table first, whatever their size', () => {
    const [longest, second] = Object.entries(table).sort((a, b) => b[1] - a[1]);
    const small = testAt(longest[0], 10);
    const tests = [testAt('x/unmeasured-big.test.ts', 200_000), testAt(second[0], 50_000), small];
    const order = new LongestFirst({}).sort(tests).map((t: { path: string }) => t.path);
    expect(order[0]).toBe(small.path);
    expect(order[1]).toBe(join(root, second[0]));
  });

  it('guesses a file missing from the table by its size: a bigger file first', () => {
    const order = new LongestFirst({})
      .sort([testAt('x/small.test.ts', 2_000), testAt('x/big.test.ts', 90_000)])
      .map((t: { path: string }) => t.path);
    expect(order).toEqual([join(root, 'x/big.test.ts'), join(root, 'x/small.test.ts')]);
  });

  it('starts the files that need the S3-compatible server last, whatever their length (it may still be building)', () => {
    const s3 = testAt('gateway/test/component/s3-artifact-store.test.ts', 900_000);
    const order = new LongestFirst({})
      .sort([s3, testAt('x/small.test.ts', 2_000), testAt('test/e2e/releases.test.ts', 900_000)])
      .map((t: { path: string }) => t.path);
    expect(order[0]).toBe(join(root, 'x/small.test.ts'));
    expect(order.slice(1).sort()).toEqual([s3.path, join(root, 'test/e2e/releases.test.ts')].sort());
  });

  it('names only files that exist, with a number of seconds each', () => {
    const stale = Object.keys(table).filter((path) => !existsSync(join(root, path)));
    expect(stale).toEqual([]);
    for (const seconds of Object.values(table)) expect(seconds).toBeGreaterThan(0);
  });
});
