import type { ChildProcess } from 'node:child_process';
import { waitForPort } from './net';

/**
 * A helper program the project runs on loopback (FerretDB, stripe-mock): waits
 * until it listens on `port`, or fails with the tail of its stderr if it exits
 * first; `stop()` asks it to end, then makes it.
 */
export async function untilListening(child: ChildProcess, name: string, port: number): Promise<() => Promise<void>> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`${name} exited with code ${code}: ${stderr}`))),
  );
  await Promise.race([waitForPort('127.0.0.1', port, 20_000), exited]);
  exited.catch(() => undefined);
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
}
