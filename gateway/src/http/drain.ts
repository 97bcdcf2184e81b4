import type { Server } from 'node:http';
import type { Logger } from '@licensing/runtime';

/**
 * Graceful stop of the HTTP side. Counts requests in flight; once draining,
 * /readyz says 503 (load balancers stop sending), answers carry
 * `Connection: close` (clients do not reuse the socket), the listener closes,
 * and the server waits for the requests it accepted, up to a hard limit.
 */
export class Drain {
  private inFlight = 0;
  private aborted = 0;
  private idle?: () => void;
  draining = false;

  constructor(
    private readonly server: Server,
    private readonly log: Logger,
  ) {
    server.on('request', (_req, res) => {
      this.inFlight++;
      // The validation fast path has answered already (its headers are sent, with Connection: close
      // while draining): setting a header now would throw, in the server's own 'request' event.
      if (this.draining && !res.headersSent) res.setHeader('Connection', 'close');
      res.once('close', () => {
        this.inFlight--;
        if (!res.writableFinished) this.aborted++;
        if (this.inFlight === 0) this.idle?.();
      });
    });
  }

  async stop(delayMs: number, timeoutMs: number): Promise<void> {
    this.draining = true;
    // Still serving while load balancers notice /readyz (SHUTDOWN_DRAIN_DELAY_MS).
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // A connection accepted a moment ago may not have sent its request yet: give it
    // a moment before idle sockets are closed, then wait for what is in flight.
    await new Promise((r) => setTimeout(r, 250));
    const atClose = this.inFlight;
    const finished = new Promise<void>((resolve) => {
      this.idle = resolve;
      if (this.inFlight === 0) resolve();
    });
    const limit = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
    const outcome = await Promise.race([finished, limit]);
    this.server.closeAllConnections();
    await Promise.race([closed, new Promise((r) => setTimeout(r, 100))]);
    this.log.info(
      {
        in_flight_at_close: atClose,
        unfinished: outcome === 'timeout' ? this.inFlight : 0,
        aborted_by_clients: this.aborted,
      },
      'http server drained',
    );
  }
}
