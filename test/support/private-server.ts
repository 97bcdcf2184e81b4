import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort, portAnswers, waitForPort } from '../../scripts/lib/net';
import { eventually } from './eventually';

/** Finds a server binary on PATH or in /usr/sbin, or says how to install it. */
export function serverBinary(name: string, install: string): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    if (existsSync(`/usr/sbin/${name}`)) return `/usr/sbin/${name}`;
    throw new Error(`${name} is not installed: the outage tests start their own (${install})`);
  }
}

/**
 * A private server process on a random loopback port, for tests that must take
 * a dependency away and bring it back. It keeps its port (and whatever its
 * arguments say about storage) across pause and resume, like a real outage.
 */
export class PrivateServer {
  private child?: ChildProcess;

  constructor(
    readonly port: number,
    private readonly binary: string,
    private readonly args: string[],
  ) {}

  static async launch<T extends PrivateServer>(
    this: new (
      port: number,
      binary: string,
      args: string[],
    ) => T,
    binary: string,
    args: (port: number) => string[],
  ): Promise<T> {
    const port = await freePort();
    const server = new this(port, binary, args(port));
    await server.resume();
    return server;
  }

  async resume(): Promise<void> {
    this.child = spawn(this.binary, this.args, { stdio: 'ignore' });
    this.child.once('error', () => undefined);
    await waitForPort('127.0.0.1', this.port, 10_000);
  }

  async pause(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
    await eventually(async () => expect(await portAnswers('127.0.0.1', this.port, 200)).toBe(false), {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
  }
}
