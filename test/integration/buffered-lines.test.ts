import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// The access log's stdout (bufferedLineSink): lines are written in batches, later than they are
// made, so what matters is that none is lost when the process ends, and that they arrive whole and
// in order. A child process writes through it and ends in each way it can end but SIGKILL.

const runtime = join(__dirname, '../../packages/runtime/dist/index.js');

function childWrites(lines: number, ending: string): string[] {
  const script = `
    const { bufferedLineSink } = require(${JSON.stringify(runtime)});
    const sink = bufferedLineSink();
    for (let i = 0; i < ${lines}; i++) sink.write(JSON.stringify({ i, pad: 'x'.repeat(i % 300) }) + '\\n');
    ${ending}
  `;
  const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  expect(out.stderr).toBe('');
  return out.stdout.split('\n').filter(Boolean);
}

const inOrder = (lines: string[]) => lines.map((l) => (JSON.parse(l) as { i: number }).i);
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

it('an ending process (event loop empty) writes every buffered line, in order', () => {
  expect(inOrder(childWrites(20_000, ''))).toEqual(upTo(20_000));
});

it('process.exit() right after writing loses nothing', () => {
  expect(inOrder(childWrites(5_000, 'process.exit(3);'))).toEqual(upTo(5_000));
});

it('lines written across timer ticks, with an explicit flush at the end, arrive whole and in order', () => {
  const lines = childWrites(
    0,
    `let i = 0;
     const t = setInterval(() => {
       for (let j = 0; j < 500; j++, i++) sink.write(JSON.stringify({ i }) + '\\n');
       if (i >= 10_000) { clearInterval(t); sink.flushSync(); }
     }, 5);`,
  );
  expect(inOrder(lines)).toEqual(upTo(10_000));
});
