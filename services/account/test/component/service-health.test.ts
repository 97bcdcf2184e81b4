import { execFile } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { health } from '@licensing/proto';
import { start } from '../../src/main';
import { envFor } from '../../../../scripts/lib/topology';
import { PrivateNats } from '../../../../test/support/nats-server';
import { testTopology } from '../../../../test/support/stack';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { eventually } from '../../../../test/support/eventually';

const { SERVING, NOT_SERVING } = health.HealthCheckResponse_ServingStatus;

// A service binds its gRPC port first and answers health checks NOT_SERVING
// until MongoDB and NATS are both reachable, so an orchestrator sees a live
// process that is not ready instead of a crash loop.

/** Stands in at a stopped server's port and counts the connections made to it (each closed at once: a failed attempt). */
async function countAttempts(port: number): Promise<{ count(): number; close(): Promise<void> }> {
  let n = 0;
  const server = createServer((socket: Socket) => {
    n++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    count: () => n,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function waitForStatus(
  probe: health.HealthClient,
  want: health.HealthCheckResponse_ServingStatus,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = () =>
      probe.check({ service: '' }, (err, res) => {
        if (!err && res!.status === want) return resolve();
        if (Date.now() > deadline)
          return reject(new Error(`health never became ${want} (last: ${err?.message ?? res?.status})`));
        setTimeout(poll, 100);
      });
    poll();
  });
}

it('is NOT_SERVING while NATS is unreachable, SERVING once it is up, NOT_SERVING again when shutting down', async () => {
  const nats = await PrivateNats.start();
  const t = testTopology({ natsUrl: nats.url });
  // The deployment's set-up step made the stream before the outage (the server keeps it).
  await setUpEvents(t);
  await nats.pause();
  let port = 0;
  let listening!: () => void;
  const bound = new Promise<void>((resolve) => (listening = resolve));
  const running = start({
    env: envFor('account', t, { port: 0 }),
    onListening: (p) => {
      port = p;
      listening();
    },
  });
  await bound;
  const probe = new health.HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    await waitForStatus(probe, NOT_SERVING);
    // Several connection attempts later (counted at NATS's port, not waited for): still not serving.
    const attempts = await countAttempts(nats.port);
    await eventually(() => expect(attempts.count()).toBeGreaterThanOrEqual(3), { timeoutMs: 15_000, intervalMs: 50 });
    await attempts.close();
    await waitForStatus(probe, NOT_SERVING, 100);
    // The container healthcheck (a separate process: the service runs in this one) agrees.
    const healthcheck = (addr: string) =>
      new Promise<number | null>((resolve) =>
        execFile(
          process.execPath,
          [join(__dirname, '../../../../packages/runtime/dist/grpc/healthcheck.js'), 'grpc', addr],
          { timeout: 10_000 },
          (err) => resolve(err ? (err.code as number) : 0),
        ),
      );
    expect(await healthcheck(`127.0.0.1:${port}`)).toBe(1);
    await nats.resume();
    await waitForStatus(probe, SERVING);
    expect(await healthcheck(`127.0.0.1:${port}`)).toBe(0);
    const service = await running;
    const stopping = service.stop();
    expect(service.ctx.grpc.health.isServing).toBe(false);
    await stopping;
  } finally {
    probe.close();
    await nats.stop();
  }
});

it('is NOT_SERVING while MongoDB is unreachable', async () => {
  const t = testTopology({ mongoUrl: 'mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=200' });
  let port = 0;
  let listening!: () => void;
  const bound = new Promise<void>((resolve) => (listening = resolve));
  const abort = new AbortController();
  const running = start({
    env: envFor('account', t, { port: 0 }),
    signal: abort.signal,
    onListening: (p) => {
      port = p;
      listening();
    },
  });
  await bound;
  const probe = new health.HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    await waitForStatus(probe, NOT_SERVING);
    // Liveness is about the process, not its stores: no restart for a database outage.
    const live = await new Promise<health.HealthCheckResponse_ServingStatus>((resolve, reject) =>
      probe.check({ service: 'liveness' }, (err, res) => (err ? reject(err) : resolve(res!.status))),
    );
    expect(live).toBe(SERVING);
    const unknown = await new Promise<number | undefined>((resolve) =>
      probe.check({ service: 'nope' }, (err) => resolve(err?.code)),
    );
    expect(unknown).toBe(5); // NOT_FOUND, as the health protocol says
  } finally {
    probe.close();
    abort.abort();
  }
  await expect(running).rejects.toThrow(/aborted while waiting for MongoDB/);
});
