import { randomBytes } from 'node:crypto';
import {
  AckPolicy,
  DeliverPolicy,
  createInbox,
  nanos,
  type JetStreamManager,
  type Msg,
  type NatsConnection,
  type NatsError,
  type Subscription,
} from 'nats';
import type { Logger } from '../observability/logger';

/**
 * How often JetStream tells a quiet follower what it has delivered so far (an idle heartbeat), and
 * how long a follower may hear nothing before it stops trusting what it follows. Together they bound
 * how late a cache hears that it missed an eviction: a lost message shows in the next heartbeat
 * (FOLLOW_HEARTBEAT_MS), lost heartbeats too after FOLLOW_SILENCE_MS, both within the second that
 * revocation is documented to take (docs/architecture.md, "A map of the caches").
 */
export const FOLLOW_HEARTBEAT_MS = 250;
export const FOLLOW_SILENCE_MS = 750;
/** The server deletes a follower's consumer this long after nobody listens to it (a process gone, a follower replaced). */
const CONSUMER_INACTIVE_MS = 5000;
/** Between attempts to create a consumer again (doubling up to the last). */
const RETRY_MS = [100, 250, 500, 1000, 2000];

/** Why a follower stopped trusting what it heard: counted in licensing_eviction_feed_lost_total. */
export type LostReason = 'gap' | 'silence' | 'disconnected' | 'consumer';

/**
 * What a cache needs from its events: whether every one of them reaches it right now, and word when
 * that changes (the shape ExactCache takes as its bus).
 */
export interface Following {
  /** True while every event since it last became true has arrived, in order, and the feed is not silent. */
  readonly connected: boolean;
  /** Called whenever `connected` changes. */
  onStatus(listener: (connected: boolean) => void): void;
}

/** For a cache that is off: it follows nothing and is never trusted. */
export const NOT_FOLLOWING: Following = { connected: false, onStatus: () => undefined };

export interface FollowOptions {
  nc: NatsConnection;
  jsm: () => Promise<JetStreamManager>;
  stream: string;
  /** Full subjects to follow, each with a consumer of its own (one filter per consumer, as NATS permissions can name it). */
  subjects: string[];
  /** The prefix of this connection's reply inboxes (its NATS user may subscribe only there). */
  inboxPrefix?: string;
  /** Names the consumers (`<name>-<random>`), so an operator can tell whose they are. */
  name: string;
  log: Logger;
  onMessage(subject: string, data: Uint8Array): void;
  onLost?(reason: LostReason): void;
  heartbeatMs?: number;
  silenceMs?: number;
}

/**
 * Events that keep a cache exact, read from the JetStream stream rather than from core NATS, so that
 * a lost one is noticed. Core NATS drops messages silently (a slow consumer, a partition); a
 * JetStream consumer numbers what it delivers, so here each subject has an ephemeral push consumer
 * (deliver "new", no acks, in memory, with idle heartbeats) and:
 * - a message whose number is not the next one, or a heartbeat saying more was delivered than
 *   arrived, is a gap;
 * - nothing at all (neither message nor heartbeat) for FOLLOW_SILENCE_MS is a silence;
 * - a lost connection, or a consumer that cannot be made, is neither trusted.
 * Any of these makes `connected` false at once (a cache then empties itself and answers from the
 * source) and replaces the consumer with a new one that starts from now: what was missed no longer
 * matters, since the cache forgot everything. `connected` is true again once the new one exists.
 */
export class FollowedEvents implements Following {
  private readonly followers: SubjectFollower[];
  private readonly listeners: Array<(connected: boolean) => void> = [];
  private inSync = false;
  private busUp = true;
  private closed = false;
  readonly heartbeatMs: number;
  readonly silenceMs: number;

  constructor(readonly opts: FollowOptions) {
    this.heartbeatMs = opts.heartbeatMs ?? FOLLOW_HEARTBEAT_MS;
    this.silenceMs = opts.silenceMs ?? FOLLOW_SILENCE_MS;
    this.followers = opts.subjects.map((subject) => new SubjectFollower(this, subject));
    for (const f of this.followers) f.start();
  }

  get connected(): boolean {
    return this.inSync;
  }

  onStatus(listener: (connected: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** The connection to NATS dropped (nothing can be trusted) or came back (every consumer is made again). */
  connection(up: boolean): void {
    this.busUp = up;
    for (const f of this.followers) {
      if (up) f.start();
      else f.lose('disconnected', false);
    }
    this.changed();
  }

  get up(): boolean {
    return this.busUp && !this.closed;
  }

  /** Recomputes `connected` and tells the listeners when it changed. */
  changed(): void {
    const now = this.up && this.followers.every((f) => f.inSync);
    if (now === this.inSync) return;
    this.inSync = now;
    for (const l of this.listeners) l(now);
  }

  close(): void {
    this.closed = true;
    for (const f of this.followers) f.close();
    this.changed();
  }
}

/** One subject's consumer and what arrived from it. */
class SubjectFollower {
  inSync = false;
  /** The subscription of the current consumer's inbox: messages to any other are from a replaced one. */
  private sub?: Subscription;
  private delivered = 0;
  private heardAt = 0;
  private retry?: NodeJS.Timeout;
  /**
   * Fires when nothing was heard for silenceMs: re-armed (refresh) by every message and heartbeat, so
   * an idle process wakes only for the heartbeats themselves, never to look.
   */
  private silence?: NodeJS.Timeout;
  private attempt = 0;
  private warned = false;

  constructor(
    private readonly host: FollowedEvents,
    readonly subject: string,
  ) {}

  /** Replaces the consumer with a new one that delivers from now on. */
  start(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    this.sub?.unsubscribe();
    this.sub = undefined;
    if (!this.host.up) return;
    const { nc, stream, inboxPrefix, name, log } = this.host.opts;
    const inbox = createInbox(inboxPrefix);
    const sub = nc.subscribe(inbox, { callback: (err, msg) => this.heard(sub, err, msg) });
    this.sub = sub;
    this.delivered = 0;
    void (async () => {
      try {
        const jsm = await this.host.opts.jsm();
        await jsm.consumers.add(stream, {
          name: `${name}-${randomBytes(8).toString('hex')}`,
          deliver_subject: inbox,
          deliver_policy: DeliverPolicy.New,
          ack_policy: AckPolicy.None,
          filter_subject: this.subject,
          idle_heartbeat: nanos(this.host.heartbeatMs),
          mem_storage: true,
          num_replicas: 1,
          inactive_threshold: nanos(CONSUMER_INACTIVE_MS),
        });
      } catch (err) {
        if (this.sub !== sub) return;
        if (!this.warned)
          log.warn({ err, subject: this.subject }, 'could not follow events; the cache is off meanwhile');
        this.warned = true;
        this.host.opts.onLost?.('consumer');
        this.retry = setTimeout(() => this.start(), RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)]);
        this.retry.unref();
        return;
      }
      if (this.sub !== sub) return; // replaced meanwhile
      if (this.warned) log.info({ subject: this.subject }, 'following events again; the cache is on');
      this.warned = false;
      this.attempt = 0;
      this.heardAt = Date.now();
      this.inSync = true;
      this.watchSilence();
      this.host.changed();
    })();
  }

  private watchSilence(): void {
    if (this.silence) return void this.silence.refresh();
    this.silence = setTimeout(() => {
      // After the I/O already waiting (setImmediate runs after this turn's poll), so a busy event loop
      // whose heartbeats are queued is not mistaken for a silent server.
      setImmediate(() => {
        // The timer ran its whole silenceMs since the last refresh: 5 ms of slack for Date.now()'s steps.
        if (this.inSync && Date.now() - this.heardAt >= this.host.silenceMs - 5) this.lose('silence');
        else if (this.inSync) this.silence?.refresh();
      });
    }, this.host.silenceMs);
    this.silence.unref();
  }

  private heard(sub: Subscription, err: NatsError | null, msg: Msg): void {
    if (sub !== this.sub) return;
    if (err) {
      this.lose('consumer');
      return;
    }
    this.heardAt = Date.now();
    this.silence?.refresh();
    const status = msg.headers?.code ?? 0;
    if (status) {
      // 100: an idle heartbeat, with how many messages this consumer has delivered so far.
      if (status === 100 && msg.headers?.get('Nats-Last-Consumer')) {
        if (Number(msg.headers.get('Nats-Last-Consumer')) !== this.delivered) this.lose('gap');
      } else if (status >= 400) this.lose('consumer'); // e.g. 409 consumer deleted
      return;
    }
    const seq = deliverySequenceOf(msg.reply ?? '');
    if (seq !== this.delivered + 1) {
      this.lose('gap');
      return;
    }
    this.delivered = seq;
    try {
      this.host.opts.onMessage(msg.subject, msg.data);
    } catch (e) {
      this.host.opts.log.warn({ err: e, subject: msg.subject }, 'could not handle event');
    }
  }

  /** Stops trusting this subject's events; unless the connection is away, makes a new consumer. */
  lose(reason: LostReason, restart = true): void {
    const was = this.inSync;
    this.inSync = false;
    if (was) {
      this.host.opts.onLost?.(reason);
      this.host.opts.log.warn(
        { subject: this.subject, reason },
        'events may have been missed: the cache is emptied and off until it follows them again',
      );
      this.host.changed();
    }
    if (!restart) {
      this.sub?.unsubscribe();
      this.sub = undefined;
    } else if (was || this.sub) this.start();
  }

  close(): void {
    clearTimeout(this.retry);
    clearTimeout(this.silence);
    this.silence = undefined;
    this.sub?.unsubscribe();
    this.sub = undefined;
    this.inSync = false;
  }
}

/**
 * The number a JetStream consumer gave a message it delivered, from the message's reply subject:
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>`, or with
 * `<domain>.<account hash>` after `ACK` and a token at the end (newer servers). NaN when it is not one.
 */
export function deliverySequenceOf(reply: string): number {
  const t = reply.split('.');
  if (t[0] !== '$JS' || t[1] !== 'ACK') return Number.NaN;
  if (t.length === 9) return Number(t[6]);
  if (t.length >= 11) return Number(t[8]);
  return Number.NaN;
}
