import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from 'nats';
import { isEventType, type DomainEvent } from '@licensing/proto';
import {
  WEBHOOK_FANOUT_CONSUMER,
  endSpan,
  startConsumerSpan,
  traceparentOf,
  type Clock,
  type EventBus,
  type Logger,
  type StartedSpan,
  type Tracing,
} from '@licensing/runtime';
import { subscribes } from '../domain/delivery';
import type { DeliveryDoc, DeliveryStore } from '../store/deliveries';
import type { EndpointCache } from '../store/endpoint-cache';

/** Its name is in the webhook user's NATS permissions (packages/runtime/src/events/nats-access.ts). */
export const FANOUT_CONSUMER = WEBHOOK_FANOUT_CONSUMER;
const ACK_WAIT_NS = 5e9;
const PULL_EXPIRES_MS = 2000;
/** Events fanned out together at most: one endpoint look-up per account and one insert for all of them. */
export const FANOUT_BATCH = 50;

/** The body of a webhook request: the event without its account (a domain event, or the test event). */
export const webhookBody = (e: Pick<DomainEvent, 'id' | 'created_at'> & { type: string; data: unknown }) =>
  JSON.stringify({ id: e.id, type: e.type, created_at: e.created_at, data: e.data });

/** A new delivery of an event to an endpoint, due now; its id is the pair's, so it can be recorded only once. */
export const newDelivery = (
  event: Pick<DomainEvent, 'id' | 'account_id'> & { type: string },
  endpointId: string,
  body: string,
  now: Date,
  traceparent?: string,
): DeliveryDoc => ({
  _id: `dlv_${event.id.replace(/^evt_/, '')}_${endpointId.replace(/^we_/, '')}`,
  account_id: event.account_id,
  endpoint_id: endpointId,
  event_id: event.id,
  event_type: event.type,
  body,
  status: 'pending',
  attempts: 0,
  next_attempt_at: now,
  last_status_code: null,
  last_error: null,
  last_latency_ms: null,
  created_at: now,
  delivered_at: null,
  ...(traceparent ? { traceparent } : {}),
});

/**
 * A durable JetStream consumer reads every domain event and records one
 * delivery per matching enabled endpoint of the event's account before it
 * acknowledges the message; an event that arrives again adds nothing. An
 * event is believed only on the subject of its own type, which only its owner
 * may publish: a service cannot make the webhook service sign a forged
 * checkout.completed by sending one on a subject of its own.
 *
 * The messages already waiting are taken together (up to FANOUT_BATCH): the
 * endpoints of each account are looked up once (EndpointCache), all their
 * deliveries are recorded in one unordered insert, and the ones it added are
 * handed to the dispatcher at once, which sends them without waiting for its
 * poll of the store. Nothing is acknowledged before its deliveries are recorded.
 */
export class Fanout {
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;

  constructor(
    private readonly bus: EventBus,
    private readonly stream: string,
    private readonly endpoints: Pick<EndpointCache, 'enabledOf'>,
    private readonly deliveries: Pick<DeliveryStore, 'recordAll'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Told the deliveries just recorded (the dispatcher sends them at once). */
    private readonly recorded: (deliveries: DeliveryDoc[]) => void = () => undefined,
    /** When on: each traced event is fanned out in a consumer span, and its deliveries continue that trace. */
    private readonly tracing?: Tracing,
  ) {}

  async start(): Promise<void> {
    const jsm = await this.bus.nc.jetstreamManager();
    // ack_wait 5 s: an event handed to an instance that stopped or died before acknowledging it is
    // given to another within seconds (fanning out is quick, and a second fan-out adds nothing).
    await jsm.consumers
      .add(this.stream, {
        durable_name: FANOUT_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ACK_WAIT_NS,
        max_deliver: -1,
      })
      .catch(async () =>
        jsm.consumers
          .update(this.stream, FANOUT_CONSUMER, { ack_wait: ACK_WAIT_NS })
          .catch(() => jsm.consumers.info(this.stream, FANOUT_CONSUMER)),
      );
    const consumer = await this.bus.nc.jetstream().consumers.get(this.stream, FANOUT_CONSUMER);
    // Pull requests expire after 2 s (nats.js waits 30 s by default): the server cannot take back a request
    // a stopped instance left waiting, and until it expires it may hand that dead request new events,
    // which then wait out ack_wait, again and again, before a live instance gets them.
    const messages = await consumer.consume({ max_messages: FANOUT_BATCH, expires: PULL_EXPIRES_MS });
    this.messages = messages;
    this.loop = (async () => {
      // Not messages.getPending(): the consumer queues its pull requests in the same iterator, so it
      // may count one of those as a message ready, and a batch would wait for the next event.
      const ready: JsMsg[] = [];
      let working: Promise<void> | undefined;
      const work = async () => {
        while (ready.length) await this.handle(ready.splice(0, FANOUT_BATCH));
        working = undefined;
      };
      for await (const m of messages) {
        ready.push(m);
        // Begun on the next turn of the event loop, once the messages of the same read are all here:
        // under a trickle each event goes alone, at once; under load a batch forms while the last is
        // written. Two batches waiting are enough: the consumer then asks the server for no more.
        working ??= new Promise<void>((r) => setImmediate(r)).then(work);
        if (ready.length >= 2 * FANOUT_BATCH) await working;
      }
      await working;
    })().catch((err) => this.log.warn({ err }, 'the webhook fan-out stopped reading events'));
  }

  private async handle(batch: JsMsg[]): Promise<void> {
    const events: DomainEvent[] = [];
    const taken: JsMsg[] = [];
    /** Traced events' consumer spans, by event id. */
    const spans = new Map<string, StartedSpan>();
    for (const m of batch) {
      try {
        const event = this.bus.eventOf(m.subject, m.data);
        if (event) {
          events.push(event);
          taken.push(m);
          const traced = startConsumerSpan(this.tracing, m, event);
          if (traced) spans.set(event.id, traced);
        } else m.ack(); // not believed: nothing to record
      } catch (err) {
        this.log.warn({ err }, 'could not read an event; it will be redelivered');
        m.nak(1000);
      }
    }
    let failure: string | undefined;
    try {
      const traces = new Map([...spans].map(([id, s]) => [id, traceparentOf(s.context)!]));
      await this.fanOut(events, traces);
      for (const m of taken) m.ack();
    } catch (err) {
      failure = (err as Error).message;
      this.log.warn({ err, events: events.length }, 'could not fan out events; they will be redelivered');
      for (const m of taken) m.nak(1000);
    }
    for (const s of spans.values()) endSpan(s.span, failure);
  }

  /**
   * Records one delivery per (event, matching enabled endpoint of its account) in one insert, and
   * hands the ones it added to the dispatcher; deliveries recorded before (an event that arrived
   * again) are neither recorded nor sent again. The ones added are answered. `traces`: the trace
   * context each traced event's deliveries continue, by event id.
   */
  async fanOut(events: DomainEvent[], traces?: Map<string, string>): Promise<DeliveryDoc[]> {
    const accounts = [...new Set(events.map((e) => e.account_id))];
    const endpointsOf = new Map(
      await Promise.all(accounts.map(async (a) => [a, await this.endpoints.enabledOf(a)] as const)),
    );
    const now = this.clock.now();
    const docs: DeliveryDoc[] = [];
    for (const event of events) {
      // The account's own actions (a password reset) are the audit log's alone: no endpoint hears of them.
      if (!isEventType(event.type)) continue;
      const matching = (endpointsOf.get(event.account_id) ?? []).filter((e) => subscribes(e.events, event.type));
      if (!matching.length) continue;
      const body = webhookBody(event);
      const traceparent = traces?.get(event.id);
      for (const endpoint of matching) docs.push(newDelivery(event, endpoint._id, body, now, traceparent));
    }
    const added = await this.deliveries.recordAll(docs);
    if (added.length) this.recorded(added);
    return added;
  }

  /** Stops reading, and waits for the batch in hand to be recorded and acknowledged. */
  async stop(): Promise<void> {
    await this.messages?.close().catch(() => undefined);
    await this.loop;
  }
}
