import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from 'nats';
import type { DomainEvent } from '@licensing/proto';
import type { Logger } from '../observability/logger';
import type { EventBus } from './bus';

const ACK_WAIT_NS = 5e9;
// Pull requests expire after 2 s (nats.js waits 30 s by default): the server cannot take back a request a
// stopped instance left waiting, and until it expires it may hand that dead request new events.
const PULL_EXPIRES_MS = 2000;

export interface DurableBatchesOptions {
  /** The durable consumer's name (its owner's, in nats-access.ts's durableConsumers). */
  name: string;
  stream: string;
  /** Most events handled together. */
  batch: number;
  /** The events to handle, together: resolved once they are kept, then acknowledged; thrown, redelivered. */
  handle: (events: DomainEvent[]) => Promise<void>;
  log: Logger;
}

/**
 * A durable JetStream consumer of every event of the stream, from its first, handled in batches: the
 * messages already waiting are taken together (up to `batch`), handed over at once, and acknowledged
 * only once handled (a failed batch is redelivered a second later). Under a trickle each event goes
 * alone, at once; under load a batch forms while the last is handled. An event whose subject is not its
 * type's (not from its owner) is acknowledged unhandled. Handling must be idempotent: a batch may
 * arrive again (an instance stopped before its acknowledgement).
 */
export class DurableBatches {
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;

  constructor(
    private readonly bus: EventBus,
    private readonly opts: DurableBatchesOptions,
  ) {}

  async start(): Promise<void> {
    const { name, stream } = this.opts;
    const jsm = await this.bus.nc.jetstreamManager();
    await jsm.consumers
      .add(stream, {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ACK_WAIT_NS,
        max_deliver: -1,
      })
      .catch(async () =>
        jsm.consumers.update(stream, name, { ack_wait: ACK_WAIT_NS }).catch(() => jsm.consumers.info(stream, name)),
      );
    const consumer = await this.bus.nc.jetstream().consumers.get(stream, name);
    const messages = await consumer.consume({ max_messages: this.opts.batch, expires: PULL_EXPIRES_MS });
    this.messages = messages;
    this.loop = (async () => {
      const ready: JsMsg[] = [];
      let working: Promise<void> | undefined;
      const work = async () => {
        while (ready.length) await this.handle(ready.splice(0, this.opts.batch));
        working = undefined;
      };
      for await (const m of messages) {
        ready.push(m);
        working ??= new Promise<void>((r) => setImmediate(r)).then(work);
        if (ready.length >= 2 * this.opts.batch) await working;
      }
      await working;
    })().catch((err) => this.opts.log.warn({ err, consumer: name }, 'a durable consumer stopped reading events'));
  }

  private async handle(batch: JsMsg[]): Promise<void> {
    const events: DomainEvent[] = [];
    const taken: JsMsg[] = [];
    for (const m of batch) {
      try {
        const event = this.bus.eventOf(m.subject, m.data);
        if (event) {
          events.push(event);
          taken.push(m);
        } else m.ack(); // not believed: nothing to handle
      } catch (err) {
        this.opts.log.warn({ err, consumer: this.opts.name }, 'could not read an event; it will be redelivered');
        m.nak(1000);
      }
    }
    try {
      await this.opts.handle(events);
      for (const m of taken) m.ack();
    } catch (err) {
      this.opts.log.warn(
        { err, consumer: this.opts.name, events: events.length },
        'could not handle events; they will be redelivered',
      );
      for (const m of taken) m.nak(1000);
    }
  }

  /** Stops reading, and waits for the batch in hand to be handled and acknowledged. */
  async stop(): Promise<void> {
    await this.messages?.close().catch(() => undefined);
    await this.loop;
  }
}
