import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/** True if something accepts TCP connections at host:port within `timeoutMs`. */
export function portAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await portAnswers(host, port, 500)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing answered at ${host}:${port} within ${timeoutMs} ms`);
}

/**
 * A loopback port that is free now, for a server that binds it a moment later (often in another
 * process, which is why we cannot just listen on port 0 there).
 *
 * The port is not taken from the kernel (listen on 0): between our close and the later bind the
 * kernel may hand that same port to any outgoing connection or port-0 listener on the machine, and
 * with eight test workers opening connections it did (CI failed on `listen EADDRINUSE`). The kernel
 * never hands out ports below its ephemeral range, so we pick from just below it. Each jest worker
 * walks its own slice of that band, so two workers never pick the same port either (and TEST_PORT_SLICE
 * shifts every slice of a run, for two runs at once on one machine).
 */
export async function freePort(): Promise<number> {
  const band = reservedBand();
  for (let tries = 0; tries < band.size; tries++) {
    const port = band.start + (nextOffset++ % band.size);
    if (await canBind(port)) return port;
  }
  throw new Error(`no free port in ${band.start}-${band.start + band.size - 1}`);
}

const BAND_WIDTH = 12_000;
const SLICES = 32;
let nextOffset = Math.floor(Math.random() * (BAND_WIDTH / SLICES));

function reservedBand(): { start: number; size: number } {
  let ephemeralStart = 32768;
  try {
    ephemeralStart =
      Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralStart;
  } catch {
    // Not Linux: macOS and the BSDs start theirs at 49152, so a band below 32768 is safe there too.
  }
  const bottom = Math.max(1024, ephemeralStart - BAND_WIDTH);
  const size = Math.floor((ephemeralStart - bottom) / SLICES);
  // TEST_PORT_SLICE moves a whole run to other slices, so two runs on one machine (worktrees) never collide.
  const slice = (Number(process.env.JEST_WORKER_ID ?? 0) + Number(process.env.TEST_PORT_SLICE ?? 0)) % SLICES;
  return { start: bottom + slice * size, size };
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** host and port of a URL such as mongodb://h:p, nats://h:p or redis://h:p. */
export function hostPort(url: string, defaultPort: number): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port: Number(u.port || defaultPort) };
}
