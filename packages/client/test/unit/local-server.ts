import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server on 127.0.0.1 (a port of the kernel's choosing) for what a scripted fetch cannot
// show: a request body streamed by the platform's fetch, and a redirect that fetch must not follow.
// Each request is recorded with its raw path, headers, and the size and SHA-256 of its body.

export interface Received {
  method: string;
  /** The request target as it arrived, percent-encoding untouched. */
  url: string;
  headers: IncomingMessage['headers'];
  size: number;
  sha256: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

export interface LocalServer {
  base: string;
  received: Received[];
  /** Bytes of the request body being received now (for a test that waits on the first ones). */
  onData(listener: (bytesSoFar: number) => void): void;
  close(): Promise<void>;
}

export async function localServer(handle: Handler): Promise<LocalServer> {
  const received: Received[] = [];
  const listeners: Array<(bytes: number) => void> = [];
  const server = createServer((req, res) => {
    const hash = createHash('sha256');
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      hash.update(chunk);
      for (const listener of listeners) listener(size);
    });
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        size,
        sha256: hash.digest('hex'),
      };
      received.push(entry);
      handle(req, res, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    onData: (listener) => listeners.push(listener),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
}
