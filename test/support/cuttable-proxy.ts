import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy whose link can be cut, as if the server behind it went away: cut()
 * drops every open connection and stops listening (new connections are refused),
 * restore() listens again on the same port. For outages of a shared server that
 * must not itself be stopped (the machine's PostgreSQL, the run's FerretDB).
 */
export class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private port = 0;

  private constructor(private readonly server: Server) {}

  static async start(target: { host: string; port: number }): Promise<CuttableProxy> {
    let proxy!: CuttableProxy;
    const server = createServer((client) => {
      const upstream = connect(target);
      proxy.sockets.add(client).add(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
        proxy.sockets.delete(client);
        proxy.sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    proxy = new CuttableProxy(server);
    await proxy.listen();
    return proxy;
  }

  get address(): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.port };
  }

  private async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Drops every connection and refuses new ones. */
  async cut(): Promise<void> {
    const closed = new Promise((r) => this.server.close(r));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    await this.listen();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server.listening) await new Promise((r) => this.server.close(r));
  }
}
