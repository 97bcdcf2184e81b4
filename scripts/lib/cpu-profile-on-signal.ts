// Loaded with `--require` into a process `npm run bench` profiles. SIGUSR2 starts V8's CPU
// profiler, the next SIGUSR2 stops it and writes <BENCH_CPU_PROFILE_DIR>/<pid>.cpuprofile: the
// profile covers only the measured load, not start-up and warm-up (node --cpu-prof covers the whole
// run, so its profile showed module loading and compiling among the hot spots).
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  let profiling = false;
  process.on('SIGUSR2', () => {
    profiling = !profiling;
    const step = profiling
      ? post('Profiler.enable').then(() => post('Profiler.start'))
      : post('Profiler.stop').then((result) => {
          const { profile } = result as { profile: object };
          // Written aside, then renamed: whoever waits for the file never reads half of it.
          const file = join(dir, `${process.pid}.cpuprofile`);
          writeFileSync(`${file}.partial`, JSON.stringify(profile));
          renameSync(`${file}.partial`, file);
        });
    step.catch((err: Error) => console.error(`cpu profile: ${err.message}`));
  });
}
