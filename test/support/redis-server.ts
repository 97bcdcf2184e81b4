import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, portAnswers, waitForPort } from '../../scripts/lib/net';

/** A private redis-server on a random port, for tests that must take Redis away and bring it back. */
export class PrivateRedis {
  private child?: ChildProcess;
  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.resume();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async resume(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
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
    while (await portAnswers('127.0.0.1', this.port, 200)) await new Promise((r) => setTimeout(r, 50));
  }

  stop(): Promise<void> {
    return this.pause();
  }
}
