import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from '../../../../test/support/eventually';

// The access log's stdout (bufferedLineSink): lines are written in batches, later than they are
// made, so what matters is that none is lost when the process ends, and that they arrive whole and
// in order. A child process writes through it and ends in each way it can end but SIGKILL.

const runtime = join(__dirname, '../../dist/index.js');

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

it('a pipe whose reader falls behind (EAGAIN, partial writes) still gets every line whole, in order', async () => {
  const { spawn } = await import('node:child_process');
  // The child makes all its lines while nobody reads its stdout (the 64 KiB pipe is full long before),
  // says so on stderr, and flushes once the parent, reading again, closes its stdin.
  const script = `
    const { bufferedLineSink } = require(${JSON.stringify(runtime)});
    void process.stdout; // as Node leaves stdout once used: a non-blocking pipe, so a full one answers EAGAIN
    const sink = bufferedLineSink();
    let i = 0;
    const t = setInterval(() => {
      for (let j = 0; j < 2000; j++, i++) sink.write(JSON.stringify({ i, pad: 'y'.repeat(200) }) + '\\n');
      if (i < 16_000) return; // 3.5 MB: under the 4 MiB the sink holds before it waits for its reader
      clearInterval(t);
      process.stdin.once('end', () => sink.flushSync()).resume();
      process.stderr.write('generated\\n');
    }, 5);
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.pause();
  await eventually(() => expect(stderr).toBe('generated\n'), { timeoutMs: 20_000, intervalMs: 20 });
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  child.stdout.resume();
  child.stdin.end();
  await new Promise((r) => child.once('close', r));
  expect(stderr).toBe('generated\n');
  const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
  expect(inOrder(lines)).toEqual(upTo(16_000));
}, 30_000);
