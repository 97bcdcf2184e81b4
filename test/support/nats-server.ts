import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrivateServer, serverBinary } from './private-server';

/** A private nats-server with JetStream whose store survives pause and resume. */
export class PrivateNats extends PrivateServer {
  private storeDir = '';

  static async start(): Promise<PrivateNats> {
    const storeDir = mkdtempSync(join(tmpdir(), 'licensing-test-nats-'));
    const n = await PrivateNats.launch(serverBinary('nats-server', 'apt-get install nats-server'), (port) => [
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-js',
      '-sd',
      storeDir,
    ]);
    n.storeDir = storeDir;
    return n;
  }

  /** With a configuration file made for its port and store folder (e.g. natsServerConfig, users and permissions). */
  static async startWithConfig(config: (port: number, storeDir: string) => string): Promise<PrivateNats> {
    const storeDir = mkdtempSync(join(tmpdir(), 'licensing-test-nats-'));
    const file = join(storeDir, 'nats.conf');
    const n = await PrivateNats.launch(serverBinary('nats-server', 'apt-get install nats-server'), (port) => {
      writeFileSync(file, config(port, join(storeDir, 'js')));
      return ['-a', '127.0.0.1', '-c', file];
    });
    n.storeDir = storeDir;
    return n;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await this.pause();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
