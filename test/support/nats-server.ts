import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort, portAnswers } from '../../scripts/lib/net';

function binary(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim();
  } catch {
    if (existsSync('/usr/sbin/nats-server')) return '/usr/sbin/nats-server';
    throw new Error('nats-server is not installed: the outage tests start their own (apt-get install nats-server)');
  }
}

/**
 * A private nats-server with JetStream for tests that must stop and restart
 * the broker. It keeps its port and store across restarts, like a real outage.
 */
export class PrivateNats {
  private child?: ChildProcess;
  private constructor(
    readonly port: number,
    private readonly storeDir: string,
  ) {}

  static async start(): Promise<PrivateNats> {
    const n = new PrivateNats(await freePort(), mkdtempSync(join(tmpdir(), 'licensing-test-nats-')));
    await n.resume();
    return n;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async resume(): Promise<void> {
    this.child = spawn(binary(), ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' });
    await waitForPort('127.0.0.1', this.port, 10_000);
  }

  async pause(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    while (await portAnswers('127.0.0.1', this.port, 200)) await new Promise((r) => setTimeout(r, 50));
  }

  async stop(): Promise<void> {
    await this.pause();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
