import { connect, headers, type MsgHdrs, type NatsConnection, type JetStreamClient, type JetStreamManager } from 'nats';
import type { DomainEvent, EventOf, EventPattern, EventsMatching, EventType } from '@licensing/proto';
import { newId } from '../core/ids';
import { checkEventStream } from './event-stream';
import { natsServers } from './nats-servers';
import { FollowedEvents, type Following } from './followed-events';
import { inboxPrefixOf, ownedBySubject } from './nats-access';
import { currentCall, withCallScope } from '../core/request-scope';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import {
  endSpan,
  remoteContext,
  SpanKind,
  traceparentOf,
  type StartedSpan,
  type TraceContext,
  type Tracing,
} from '../observability/tracing';

export interface BusOptions {
  url: string;
  subjectPrefix: string;
  stream: string;
  name: string;
  log: Logger;
  /** This component's NATS user and password (empty: no authentication, as in development). */
  user?: string;
  password?: string;
  /** PEM CA to verify the NATS server's certificate with: TLS to NATS (empty: plaintext). */
  tlsCaFile?: string;
  /** How long the stream should keep events, in hours: the set-up step makes it so; a stream that keeps them otherwise is logged. */
  retentionHours?: number;
  /** Counts accepted events (licensing_events_published_total) when given. */
  metrics?: Metrics;
  /** The component's tracing, when on: a traced event's publish is a span, and its `traceparent` a message header. */
  tracing?: Tracing;
}

/** The NATS header that carries an event's W3C trace context to its consumers. */
export const TRACEPARENT_HEADER = 'traceparent';

/** The trace context a consumed message carries (its `traceparent` header), if any. */
export function messageTrace(msgHeaders: MsgHdrs | undefined): TraceContext | undefined {
  return msgHeaders ? remoteContext(msgHeaders.get(TRACEPARENT_HEADER)) : undefined;
}

/** The consumer span (`<type> process`) of a consumed event, when tracing is on and the event is traced. */
export function startConsumerSpan(
  tracing: Tracing | undefined,
  msg: { subject: string; headers?: MsgHdrs },
  event: DomainEvent,
): StartedSpan | undefined {
  const parent = tracing && (messageTrace(msg.headers) ?? remoteContext(event.traceparent));
  return parent
    ? tracing.start(`${event.type} process`, SpanKind.CONSUMER, parent, {
        'messaging.system': 'nats',
        'messaging.destination.name': msg.subject,
        'messaging.message.id': event.id,
      })
    : undefined;
}

/**
 * Handles one consumed event in a consumer span of its trace (`<type> process`), when tracing is on
 * and the event is traced: the calls the handler makes and its log lines join that trace. Else just runs it.
 */
export async function consumeTraced<T>(
  tracing: Tracing | undefined,
  msg: { subject: string; headers?: MsgHdrs },
  event: DomainEvent,
  handle: () => Promise<T>,
): Promise<T> {
  const traced = startConsumerSpan(tracing, msg, event);
  if (!traced) return handle();
  const { span, context } = traced;
  let failure: string | undefined;
  try {
    return await withCallScope(event.request_id ?? '', Infinity, handle, context);
  } catch (err) {
    failure = (err as Error).message;
    throw err;
  } finally {
    endSpan(span, failure);
  }
}

/**
 * The event bus: one NATS connection per process, JetStream for durable
 * publishing. The connection reconnects forever; while it is down, publish()
 * fails fast and the outbox keeps the event until it can go out.
 */
export class EventBus {
  private readonly published;
  private readonly lost;
  private readonly followings: FollowedEvents[] = [];
  private jsm?: Promise<JetStreamManager>;

  private constructor(
    readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly opts: BusOptions,
  ) {
    this.published = opts.metrics?.counter('licensing_events_published_total', ['type']);
    this.lost = opts.metrics?.counter('licensing_eviction_feed_lost_total', ['reason']);
  }

  static async connect(opts: BusOptions): Promise<EventBus> {
    const nc = await connect({
      servers: natsServers(opts.url),
      name: opts.name,
      ...(opts.user ? { user: opts.user, pass: opts.password, inboxPrefix: inboxPrefixOf(opts.user) } : {}),
      ...(opts.tlsCaFile ? { tls: { caFile: opts.tlsCaFile } } : {}),
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    const bus = new EventBus(nc, nc.jetstream({ timeout: 2000 }), opts);
    try {
      // Made by the set-up step, never by a component (none may): until it exists, connect() fails and is retried.
      await bus.checkStream();
    } catch (err) {
      // Callers retry connect(); a connection left behind here would reconnect forever.
      await nc.close();
      throw err;
    }
    void bus.watchStatus();
    return bus;
  }

  subject(type: EventType | string): string {
    return `${this.opts.subjectPrefix}.${type}`;
  }

  get connected(): boolean {
    return !this.nc.isClosed() && !this.disconnected;
  }

  private disconnected = false;
  private readonly statusListeners: Array<(connected: boolean) => void> = [];

  /** Called whenever the connection drops or comes back. */
  onStatus(listener: (connected: boolean) => void): void {
    this.statusListeners.push(listener);
  }

  /**
   * The event a message carries, or undefined when its subject is not the one of
   * its type (which only the type's owner may publish): a forged event is dropped.
   */
  eventOf(subject: string, data: Uint8Array): DomainEvent | undefined {
    const event = JSON.parse(new TextDecoder().decode(data)) as DomainEvent;
    if (ownedBySubject(this.opts.subjectPrefix, subject, event?.type)) return event;
    this.opts.log.warn(
      { subject, type: event?.type },
      'dropped an event whose subject is not its type (not from its owner)',
    );
    return undefined;
  }

  /**
   * Core-NATS subscription to one event type (no durability: for caches and hints). The handler gets
   * that type's event: eventOf() lets through only an event that came on its own type's subject.
   */
  subscribe<T extends EventType>(type: T, handler: (event: DomainEvent<T>) => void): void {
    const sub = this.nc.subscribe(this.subject(type));
    void (async () => {
      for await (const msg of sub) {
        try {
          const event = this.eventOf(msg.subject, msg.data);
          if (event) handler(event as DomainEvent<T>);
        } catch (err) {
          this.opts.log.warn({ err, subject: msg.subject }, 'could not handle event');
        }
      }
    })();
  }

  /**
   * Events of these types (`license.>`, `product.updated`: after the prefix) read from the stream in
   * order, for a cache that must know when it may have missed one (followed-events.ts): `connected`
   * says whether it may be trusted. The handler gets each event that came on its own type's subject,
   * typed as one of the types the patterns stand for.
   */
  follow<P extends EventPattern>(types: P[], handler: (event: EventOf<EventsMatching<P>>) => void): Following {
    const following = new FollowedEvents({
      nc: this.nc,
      jsm: () => {
        this.jsm ??= this.nc.jetstreamManager({ timeout: 2000 }).catch((err) => {
          this.jsm = undefined;
          throw err;
        });
        return this.jsm;
      },
      stream: this.opts.stream,
      subjects: types.map((t) => this.subject(t)),
      inboxPrefix: this.opts.user ? inboxPrefixOf(this.opts.user) : undefined,
      name: this.opts.name,
      log: this.opts.log,
      onMessage: (subject, data) => {
        const event = this.eventOf(subject, data);
        if (event) handler(event as EventOf<EventsMatching<P>>);
      },
      onLost: (reason) => this.lost?.inc({ reason }),
    });
    if (!this.connected) following.connection(false);
    this.followings.push(following);
    return following;
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') {
        this.disconnected = s.type === 'disconnect';
        for (const f of this.followings) f.connection(!this.disconnected);
        for (const l of this.statusListeners) l(!this.disconnected);
      }
      if (s.type === 'reconnect') {
        this.disconnected = false;
        // The stream may be gone from this server (e.g. it was wiped): say so; only the set-up step may make it again.
        this.checkStream().catch((err) =>
          this.opts.log.error({ err: (err as Error).message }, 'event stream unavailable after reconnect'),
        );
      }
    }
  }

  /** The stream exists (else throws what the set-up step does about it); a retention other than the setting is logged. */
  private async checkStream(): Promise<void> {
    const { retentionHours } = await checkEventStream(this.nc, this.opts.stream);
    if (this.opts.retentionHours !== undefined && retentionHours !== this.opts.retentionHours)
      this.opts.log.warn(
        { stream: this.opts.stream, retention_hours: retentionHours, setting: this.opts.retentionHours },
        'the event stream keeps events for another time than EVENTS_RETENTION_HOURS says: the set-up step (events-setup) applies the setting',
      );
  }

  /**
   * Publishes one event and waits for JetStream's ack; the event id is the dedup id (Nats-Msg-Id, set
   * from msgID). The message is queued on the connection before this returns, so publishes made in the
   * same tick (concurrent flushes, a relay batch) leave in call order in one socket write, and their
   * acks come back together: many in flight, none waiting for another's round trip.
   */
  async publish(event: DomainEvent): Promise<void> {
    // A traced event (made in a traced call) is published in a producer span of that trace, whose
    // context goes along as a message header: the consumer's span is its child.
    const parent = this.opts.tracing && remoteContext(event.traceparent);
    const traced = parent
      ? this.opts.tracing!.start(`${event.type} publish`, SpanKind.PRODUCER, parent, {
          'messaging.system': 'nats',
          'messaging.destination.name': this.subject(event.type),
          'messaging.message.id': event.id,
        })
      : undefined;
    let hdrs: MsgHdrs | undefined;
    if (traced) {
      hdrs = headers();
      hdrs.set(TRACEPARENT_HEADER, traceparentOf(traced.context)!);
    }
    let failure: string | undefined;
    try {
      const ack = await this.js.publish(this.subject(event.type), JSON.stringify(event), {
        msgID: event.id,
        timeout: 2000,
        ...(hdrs ? { headers: hdrs } : {}),
      });
      if (!ack.duplicate) this.published?.inc({ type: event.type });
      traced?.span.setAttribute('messaging.nats.duplicate', ack.duplicate);
    } catch (err) {
      failure = (err as Error).message;
      throw err;
    } finally {
      if (traced) endSpan(traced.span, failure);
    }
  }

  async close(): Promise<void> {
    for (const f of this.followings) f.close();
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }
}

/**
 * A new event. Pass `id` for facts that must be published once however many
 * instances notice them: the same id is dropped by JetStream as a duplicate.
 * Events made while serving a request carry its id (`request_id`) and, traced, its `traceparent`.
 */
export function newEvent<T extends EventType>(
  type: T,
  accountId: string,
  data: DomainEvent<T>['data'],
  now = new Date(),
  id = newId('evt'),
): DomainEvent<T> {
  return newEnvelope(type, accountId, data, now, id);
}

/**
 * An event's envelope (id, type, account, time, the request that caused it) around any type and
 * data. newEvent() makes the bus's event types with it; an event that is never published, such as
 * the webhook service's `webhook.test` (sent to one endpoint on request), uses it directly.
 */
export function newEnvelope<T extends string, D>(
  type: T,
  accountId: string,
  data: D,
  now = new Date(),
  id = newId('evt'),
): Omit<DomainEvent, 'type' | 'data'> & { type: T; data: D } {
  const call = currentCall();
  const requestId = call?.requestId;
  // Kept with the event (in the outbox too), so however late it is published its consumers join the trace.
  const traceparent = traceparentOf(call?.trace);
  return {
    id,
    type,
    account_id: accountId,
    created_at: now.toISOString(),
    ...(requestId ? { request_id: requestId } : {}),
    ...(traceparent ? { traceparent } : {}),
    ...(call?.origin ? { origin: call.origin } : {}),
    data,
  };
}

/** The connection settings of a component's config, as BusOptions. */
export const natsOptions = (config: {
  NATS_URL: string;
  NATS_USER: string;
  NATS_PASSWORD: string;
  NATS_TLS_CA_FILE: string;
  EVENTS_RETENTION_HOURS: number;
}) => ({
  url: config.NATS_URL,
  user: config.NATS_USER,
  password: config.NATS_PASSWORD,
  tlsCaFile: config.NATS_TLS_CA_FILE,
  retentionHours: config.EVENTS_RETENTION_HOURS,
});
