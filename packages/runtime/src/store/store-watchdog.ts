import mongoose, { type Connection } from 'mongoose';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { outsideAnyCall } from '../core/request-scope';

/**
 * Heals a store client that no longer finds its server after the link to it was cut.
 *
 * The MongoDB driver (7.8) can leave its server monitor waiting forever: when the monitor writes its
 * check to a socket that the peer has just closed, the write is refused without an `error` event and
 * the driver waits for a `drain` that never comes. The server then stays "Unknown", and every
 * operation fails server selection (503) for as long as the process lives, although the store is
 * back. Seen here when the link between a service and FerretDB was cut for a few seconds (about one
 * run in six).
 *
 * The watchdog pings the store every `intervalMs`. When no ping has succeeded for `reconnectAfterMs`
 * while a client made just to ask answers (the store is back, this client is not), it closes the
 * client and connects it again: the same MongoClient, so every model and collection of the
 * connection keeps working. During a real outage the probe fails too and nothing is done; a
 * reconnect is tried at most once per `reconnectAfterMs`. Cost: one ping per pass, whatever the data
 * (and one probe per pass only while the store has been silent that long).
 */
export interface WatchdogOptions {
  intervalMs: number;
  reconnectAfterMs: number;
}

export const WATCHDOG_DEFAULTS: WatchdogOptions = { intervalMs: 2_000, reconnectAfterMs: 15_000 };

/** What the watchdog does with what it sees: pure, unit tested. */
export function shouldReconnect(
  s: { now: number; lastOkAt: number; lastReconnectAt: number; answersOthers: boolean },
  opts: WatchdogOptions,
): boolean {
  const silentFor = s.now - Math.max(s.lastOkAt, s.lastReconnectAt);
  return silentFor >= opts.reconnectAfterMs && s.answersOthers;
}

/** Whether the store answers a ping from a client of its own, made for the question and closed after it. */
export async function storeAnswers(url: string, timeoutMs = 2_000): Promise<boolean> {
  const client = new mongoose.mongo.MongoClient(url, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
  });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await client.close(true).catch(() => undefined);
  }
}

export class StoreWatchdog {
  private timer?: NodeJS.Timeout;
  private lastOkAt = Date.now();
  private lastReconnectAt = 0;
  private running = false;
  private readonly reconnects;

  constructor(
    private readonly conn: Connection,
    private readonly url: string,
    private readonly log: Logger,
    metrics?: Metrics,
    private readonly opts: WatchdogOptions = WATCHDOG_DEFAULTS,
    private readonly probe: (url: string) => Promise<boolean> = storeAnswers,
  ) {
    this.reconnects = metrics?.counter('licensing_store_reconnects_total', []);
  }

  start(): void {
    // Background work: never held to the deadline of the call that happened to be running.
    outsideAnyCall(() => {
      this.timer = setInterval(() => void this.pass(), this.opts.intervalMs);
      this.timer.unref();
    });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One pass (exported for tests): ping; after a long enough silence with the store reachable, reconnect. */
  async pass(now = () => Date.now()): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const db = this.conn.db;
      if (!db) throw new Error('the store connection has no database yet');
      await db.admin().command({ ping: 1 });
      this.lastOkAt = now();
    } catch {
      const state = { now: now(), lastOkAt: this.lastOkAt, lastReconnectAt: this.lastReconnectAt };
      if (!shouldReconnect({ ...state, answersOthers: true }, this.opts)) return;
      const answersOthers = await this.probe(this.url);
      if (!shouldReconnect({ ...state, answersOthers }, this.opts)) return;
      this.lastReconnectAt = now();
      this.reconnects?.inc();
      this.log.warn(
        { silent_ms: state.now - this.lastOkAt },
        'the store answers a new client but not this one: reconnecting the store client',
      );
      const client = this.conn.getClient();
      await client.close(true).catch(() => undefined);
      await client.connect().catch((err) => this.log.warn({ err }, 'store reconnect failed; will try again'));
    } finally {
      this.running = false;
    }
  }
}
