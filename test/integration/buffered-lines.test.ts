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

it('a pipe whose reader falls behind (EAGAIN, partial writes) still gets every line whole, in order', async () => {
  const { spawn } = await import('node:child_process');
  const script = `
    const { bufferedLineSink } = require(${JSON.stringify(runtime)});
    const sink = bufferedLineSink();
    let i = 0;
    const t = setInterval(() => {
      for (let j = 0; j < 2000; j++, i++) sink.write(JSON.stringify({ i, pad: 'y'.repeat(200) }) + '\\n');
      if (i >= 20_000) { clearInterval(t); setTimeout(() => sink.flushSync(), 100); }
    }, 5);
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // Nothing is read for a while: the pipe (64 KiB) fills long before the child is done.
  child.stdout.pause();
  await new Promise((r) => setTimeout(r, 1500));
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  child.stdout.resume();
  await new Promise((r) => child.once('close', r));
  expect(stderr).toBe('');
  const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
  expect(inOrder(lines)).toEqual(upTo(20_000));
}, 30_000);
