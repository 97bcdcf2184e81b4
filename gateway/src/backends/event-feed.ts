import { EventBus, untilConnected, type BusOptions, type Following } from '@licensing/runtime';
import type { DomainEvent, EventOf, EventPattern, EventsMatching, EventType } from '@licensing/proto';

/**
 * The gateway's link to NATS. The gateway only listens (the evictions of its
 * auth and validation caches) and probes (status), so it does not wait for NATS
 * before serving: it connects in the background and, until then, behaves as in
 * any NATS outage (both caches are bypassed, /api/v1/status says nats down). Subscriptions made before
 * the connection exists take effect when it arrives.
 */
export class EventFeed {
  private bus?: EventBus;
  private closed = false;
  private readonly abort = new AbortController();
  private readonly pending: Array<(bus: EventBus) => void> = [];

  static connect(opts: BusOptions): EventFeed {
    const feed = new EventFeed();
    untilConnected('NATS', opts.log, () => EventBus.connect(opts), {
      signal: feed.abort.signal,
      meanwhile: 'serving without the auth cache until then',
    }).then(
      (bus) => feed.attach(bus),
      () => undefined, // only when close() aborted the wait
    );
    return feed;
  }

  get connected(): boolean {
    return this.bus?.connected ?? false;
  }

  /** Called whenever the connection drops or comes back (not for the first connection). */
  onStatus(listener: (connected: boolean) => void): void {
    this.whenConnected((bus) => bus.onStatus(listener));
  }

  /** Events of one type (EventBus.subscribe): the handler gets that type's event. */
  subscribe<T extends EventType>(type: T, handler: (event: DomainEvent<T>) => void): void {
    this.whenConnected((bus) => bus.subscribe(type, handler));
  }

  /** Events followed from the stream (EventBus.follow); not connected until NATS is and they are in sync. */
  follow<P extends EventPattern>(types: P[], handler: (event: EventOf<EventsMatching<P>>) => void): Following {
    const later = new LaterFollowing();
    this.whenConnected((bus) => later.attach(bus.follow(types, handler)));
    return later;
  }

  /** Round trip to the NATS server in milliseconds; rejects while not connected. */
  async rtt(): Promise<number> {
    if (!this.bus) throw new Error('NATS not connected yet');
    return this.bus.nc.rtt();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await this.bus?.close();
  }

  private whenConnected(use: (bus: EventBus) => void): void {
    if (this.bus) use(this.bus);
    else this.pending.push(use);
  }

  private attach(bus: EventBus): void {
    if (this.closed) {
      void bus.close(); // the connection arrived while the gateway was stopping
      return;
    }
    this.bus = bus;
    for (const use of this.pending.splice(0)) use(bus);
  }
}

/** A Following whose bus comes later: not connected until then, its listeners handed on when it comes. */
class LaterFollowing implements Following {
  private inner?: Following;
  private readonly listeners: Array<(connected: boolean) => void> = [];

  get connected(): boolean {
    return this.inner?.connected ?? false;
  }

  onStatus(listener: (connected: boolean) => void): void {
    this.listeners.push(listener);
    this.inner?.onStatus(listener);
  }

  attach(inner: Following): void {
    this.inner = inner;
    for (const l of this.listeners) inner.onStatus(l);
  }
}
