import { PrivateServer, serverBinary } from './private-server';

/** A private redis-server that keeps nothing on disk. */
export class PrivateRedis extends PrivateServer {
  static start(): Promise<PrivateRedis> {
    return PrivateRedis.launch(serverBinary('redis-server', 'apt-get install redis-server'), (port) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
    ]);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  stop(): Promise<void> {
    return this.pause();
  }
}
