import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The README quotes the figures of docs/benchmarks.md, which `npm run bench` and `npm run bench:scale`
// rewrite: after a new measurement this fails until the README quotes the new figures.

const root = join(__dirname, '../..');
const bench = readFileSync(join(root, 'docs/benchmarks.md'), 'utf8');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The cells of the benchmark table row whose first cell starts with `name`. */
function row(name: string): string[] {
  const line = bench.split('\n').find((l) => l.startsWith(`| ${name}`));
  if (!line) throw new Error(`docs/benchmarks.md has no row "${name}"`);
  return line
    .split('|')
    .slice(1, -1)
    .map((c) => c.trim());
}

/** The README's paragraph about `npm run bench`. */
function benchParagraph(): string {
  const start = readme.indexOf('`npm run bench` compares');
  expect(start).toBeGreaterThanOrEqual(0);
  return readme.slice(start, readme.indexOf('\n`npm run bench:scale`', start));
}

it('the README quotes the validation figures of docs/benchmarks.md', () => {
  // | run | requests/s | vs bare | p50 ms | p99 ms | failed | gateway CPU ms/request |
  // The configuration users run first (npm start: access log on), the tuned one after it.
  const defaults = row('as shipped (npm start defaults');
  const cached = row('cached validation, rate limits on (local decisions)');
  const uncached = row('uncached at the gateway');
  const noCache = row('uncached anywhere');
  const traced = row('as shipped, with OpenTelemetry tracing on');
  const before = /3 × ([\d.]+ %) =/.exec(bench)?.[1];
  expect(before).toBeDefined();
  const paragraph = benchParagraph().replace(/\s+/g, ' ');
  for (const quoted of [
    `access log on), ${defaults[2]} of the bare server's rate`,
    `(${defaults[6]} ms of gateway CPU each, p99 ${defaults[4]} ms`,
    `tuned, without the access log, ${cached[2]} (${cached[6]} ms, p99 ${cached[4]} ms)`,
    `look-ups batched), ${uncached[2]}`,
    `no cache anywhere, ${noCache[2]}`,
    `before the caches: ${before}`,
    `the shipped row falls to ${traced[2]} (${traced[6]} ms of gateway CPU each)`,
  ])
    expect(paragraph).toContain(quoted);
});

it('the README quotes the figures of docs/benchmarks.md "At scale"', () => {
  // | licences | issuance | failed | first-touch p50 / p99 | deep list page p50 / p99 | under 5 % after | idle CPU |
  for (const size of ['1,000', '10,000', '100,000']) {
    const [licences, issuance, , firstTouch, listPage, quiet, idle] = row(size);
    expect(readme).toContain(`| ${licences} | ${issuance} | ${firstTouch} | ${listPage} | ${quiet} | ${idle} |`);
  }
});

it('the README quotes the import rate of docs/benchmarks.md (npm run bench:import)', () => {
  // | rows | upload (202) | job done after | **rows/s, first byte to done** | rows/s of the job |
  const section = bench.slice(bench.indexOf('<!-- import -->'), bench.indexOf('<!-- /import -->'));
  const endToEnd = /^\| [\d,]+ \| [^|]+ \| [^|]+ \| \*\*([\d,]+)\*\* \|/m.exec(section)?.[1];
  expect(endToEnd).toBeDefined();
  expect(readme.replace(/\s+/g, ' ')).toContain(
    `100,000 licences with their own keys from one jsonl file at ${endToEnd} rows/s`,
  );
});

it('the README quotes the event pipeline figures of docs/benchmarks.md (npm run bench:events)', () => {
  // | what | figure | target | |
  const steady = row('steady 100 issuances/s')[1]; // "p50 / p99 / max ms (…)"
  const p99 = /^\S+ \/ (\S+) \/ \S+ ms/.exec(steady)?.[1];
  const rate = /^(\d+)\/s/.exec(row('burst of 10,000 at 32 connections: issuance')[1])?.[1];
  const last = row('burst: last webhook after the last')[1];
  const quiet = row('burst: whole system under 5 %')[1];
  const once = row('burst: every webhook exactly once')[1];
  expect(once).toMatch(/10,000 arrived, 0 missing, 0 twice/);
  const readmeText = readme.replace(/\s+/g, ' ');
  for (const quoted of [
    `webhook arrives p99 ${p99} ms`,
    `issues ${rate}/s`,
    `arrives ${last} after the last`,
    `each exactly once`,
    `under 5 % of a core ${quiet} later`,
  ])
    expect(readmeText).toContain(quoted);
});
