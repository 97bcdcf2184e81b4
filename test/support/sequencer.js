// The order jest starts test files in: longest first, so the run does not end with one worker on a long
// file while the other has nothing left (a 60-second file started last makes the run a minute longer).
// Jest knows a file's duration only from its cache of earlier runs on this machine; a fresh clone (CI)
// has none, and jest then orders by file size, which puts a short file that waits a long time (a lease
// running out, a browser) at the end. So a file jest has no time for takes it from
// test/support/file-durations.json (measured on a whole run: `node scripts/test-durations.mjs <report>`),
// and a file in neither is guessed from its size. Files that need the S3-compatible server go last
// whatever their length: a fresh machine is still building it (in the background, global-setup.ts)
// while the rest run.
const { existsSync, readFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const root = join(__dirname, '..', '..');
const table = JSON.parse(readFileSync(join(__dirname, 'file-durations.json'), 'utf8'));

/** Seconds a file of `bytes` is guessed to take when nothing measured it: most small files take about one. */
const guessFromSize = (bytes) => 1 + bytes / 10_000;

/** A test file that starts SeaweedFS (itself or through the e2e support that does). */
const needsS3 = (path) => existsSync(path) && /startS3Server|support\/artifact-stores/.test(readFileSync(path, 'utf8'));

class LongestFirst extends Sequencer {
  /** A file's expected seconds: this machine's last run, else the committed table, else its size. */
  expected(test) {
    const cached = this.time(test);
    if (cached != null) return cached / 1000;
    const measured = table[relative(root, test.path).split('\\').join('/')];
    if (measured != null) return measured;
    return guessFromSize(test.context.hasteFS.getSize(test.path) ?? 0);
  }

  sort(tests) {
    // What jest itself reads afterwards (whether to run in band), as its own sorter leaves it.
    for (const t of tests) t.duration = this.time(t);
    const expected = new Map(tests.map((t) => [t, this.expected(t)]));
    const late = new Map(tests.map((t) => [t, needsS3(t.path)]));
    return [...tests].sort((a, b) => {
      const s3 = Number(late.get(a)) - Number(late.get(b));
      const failed = Number(this.hasFailed(b)) - Number(this.hasFailed(a));
      return s3 || failed || expected.get(b) - expected.get(a) || (a.path < b.path ? -1 : 1);
    });
  }
}

module.exports = LongestFirst;
