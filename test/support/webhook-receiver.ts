import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { eventually } from './eventually';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP receiver for webhook tests. Each path answers with the statuses
 * it was given, in turn (the last one repeats); "hang" never answers. A path
 * may take a while to answer (slow()), and the receiver counts how many requests
 * to each path it held open at once (mostAtOnce()).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly plans = new Map<string, (number | 'hang')[]>();
  private readonly delays = new Map<string, number>();
  private readonly open = new Map<string, number>();
  private readonly peak = new Map<string, number>();
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let self!: WebhookReceiver;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const path = req.url ?? '';
        self.received.push({ path, headers: req.headers, body });
        const plan = self.plans.get(path) ?? [200];
        const next = plan.length > 1 ? plan.shift()! : plan[0];
        if (next === 'hang') return; // never answers
        const held = (self.open.get(path) ?? 0) + 1;
        self.open.set(path, held);
        self.peak.set(path, Math.max(self.peak.get(path) ?? 0, held));
        const reply = () => {
          self.open.set(path, self.open.get(path)! - 1);
          // A redirect points somewhere real on this receiver, so a sender that followed it would be seen there.
          if (next >= 300 && next < 400)
            return void res.writeHead(next, { location: `${self.url}/redirected${path}` }).end();
          res.writeHead(next).end();
        };
        const delay = self.delays.get(path);
        if (delay) setTimeout(reply, delay);
        else reply();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    self = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
    return self;
  }

  answer(path: string, ...statuses: (number | 'hang')[]): void {
    this.plans.set(path, statuses);
  }

  /** Answers requests to `path` only after `ms`, so requests sent at the same time overlap here. */
  slow(path: string, ms: number): void {
    this.delays.set(path, ms);
  }

  /** The most requests to `path` this receiver was answering at the same time ("hang" ones not counted). */
  mostAtOnce(path: string): number {
    return this.peak.get(path) ?? 0;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async waitFor(path: string, count: number, timeoutMs = 10_000): Promise<Received[]> {
    return eventually(
      () => {
        if (this.at(path).length < count)
          throw new Error(`${path} received ${this.at(path).length} of ${count} requests`);
        return this.at(path);
      },
      { timeoutMs, intervalMs: 50 },
    );
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** Standard Webhooks verification, written independently: true if any v1 signature matches the secret. */
export function verifySignature(secret: string, r: Received): boolean {
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${ts}.${r.body}`)
    .digest();
  return String(r.headers['webhook-signature'])
    .split(' ')
    .map((s) => s.split(','))
    .some(
      ([v, sig]) =>
        v === 'v1' &&
        !!sig &&
        Buffer.from(sig, 'base64').length === expected.length &&
        timingSafeEqual(Buffer.from(sig, 'base64'), expected),
    );
}
