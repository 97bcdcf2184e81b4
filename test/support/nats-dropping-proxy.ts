import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between NATS clients and their server that can make the clients lose messages, as a
 * slow consumer or a partition would: drop(pick) discards every message the server sends them (MSG
 * and HMSG, JetStream deliveries, heartbeats and replies alike) whose subject `pick` chooses, and lets
 * everything else through (PING/PONG, INFO, other subjects), so the connection itself stays up.
 */
export class NatsDroppingProxy {
  private pick: (subject: string) => boolean = () => false;
  /** Messages discarded so far, by subject. */
  readonly dropped: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(target: { host: string; port: number }): Promise<NatsDroppingProxy> {
    let proxy!: NatsDroppingProxy;
    const server = createServer((client) => {
      const upstream = connect(target);
      proxy.sockets.add(client).add(upstream);
      client.pipe(upstream);
      let pending: Buffer = Buffer.alloc(0);
      upstream.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        const { passed, rest } = proxy.filter(pending);
        pending = rest;
        if (passed.length) client.write(passed);
      });
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    proxy = new NatsDroppingProxy(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `nats://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** From now on, messages whose subject `pick` chooses never reach the clients. */
  drop(pick: (subject: string) => boolean): void {
    this.pick = pick;
  }

  /** Everything passes again. */
  heal(): void {
    this.pick = () => false;
  }

  /**
   * The whole protocol operations at the front of `data` that pass, and what is left of an
   * operation not fully received yet. MSG <subject> <sid> [reply] <bytes>, HMSG <subject> <sid>
   * [reply] <header bytes> <total bytes>: a line, then that many bytes and CRLF; anything else is a line.
   */
  private filter(data: Buffer): { passed: Buffer; rest: Buffer } {
    const out: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = data.indexOf('\r\n', at);
      if (eol < 0) break;
      const line = data.subarray(at, eol).toString('latin1');
      const [op, subject] = line.split(' ');
      let end = eol + 2;
      if (op === 'MSG' || op === 'HMSG') {
        end += Number(line.slice(line.lastIndexOf(' ') + 1)) + 2;
        if (end > data.length) break;
        if (this.pick(subject)) {
          this.dropped.push(subject);
          at = end;
          continue;
        }
      }
      out.push(data.subarray(at, end));
      at = end;
    }
    return { passed: Buffer.concat(out), rest: data.subarray(at) };
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
