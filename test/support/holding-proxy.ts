import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a service whose answers can be held back: hold()
 * keeps every byte coming from the service until release(). Requests still
 * reach the service, so a test can make an answer arrive late on purpose.
 * cut() makes the service unreachable through it (connections closed and
 * refused) until restore().
 */
export class HoldingProxy {
  private held = false;
  private cutOff = false;
  private readonly queued: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(target: { host: string; port: number }): Promise<HoldingProxy> {
    let proxy!: HoldingProxy;
    const server = createServer((client) => {
      if (proxy.cutOff) {
        client.destroy();
        return;
      }
      const upstream = connect(target);
      proxy.sockets.add(client).add(upstream);
      client.pipe(upstream);
      upstream.on('data', (chunk) => (proxy.held ? proxy.queued.push(() => client.write(chunk)) : client.write(chunk)));
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    proxy = new HoldingProxy(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    for (const send of this.queued.splice(0)) send();
  }

  cut(): void {
    this.cutOff = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.cutOff = false;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
