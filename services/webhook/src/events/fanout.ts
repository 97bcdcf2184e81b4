import { AckPolicy, DeliverPolicy, type ConsumerMessages } from 'nats';
import type { DomainEvent } from '@licensing/proto';
import { WEBHOOK_FANOUT_CONSUMER, type Clock, type EventBus, type Logger } from '@licensing/runtime';
import { subscribes } from '../domain/delivery';
import type { DeliveryStore } from '../store/deliveries';
import type { EndpointStore } from '../store/queries';

/** Its name is in the webhook user's NATS permissions (packages/runtime/src/events/nats-access.ts). */
export const FANOUT_CONSUMER = WEBHOOK_FANOUT_CONSUMER;
const ACK_WAIT_NS = 5e9;
const PULL_EXPIRES_MS = 2000;

/** The body of a webhook request: the event without its account (a domain event, or the test event). */
export const webhookBody = (e: Pick<DomainEvent, 'id' | 'created_at'> & { type: string; data: unknown }) =>
  JSON.stringify({ id: e.id, type: e.type, created_at: e.created_at, data: e.data });

/**
 * A durable JetStream consumer reads every domain event and records one
 * delivery per matching enabled endpoint of the event's account before it
 * acknowledges the message; an event that arrives again adds nothing. An
 * event is believed only on the subject of its own type, which only its owner
 * may publish: a service cannot make the webhook service sign a forged
 * checkout.completed by sending one on a subject of its own.
 */
export class Fanout {
  private messages?: ConsumerMessages;

  constructor(
    private readonly bus: EventBus,
    private readonly stream: string,
    private readonly endpoints: EndpointStore,
    private readonly deliveries: DeliveryStore,
    private readonly clock: Clock,
    private readonly log: Logger,
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
    this.messages = await consumer.consume({ max_messages: 50, expires: PULL_EXPIRES_MS });
    void (async () => {
      for await (const m of this.messages!) {
        try {
          const event = this.bus.eventOf(m.subject, m.data);
          if (event) await this.fanOut(event);
          m.ack();
        } catch (err) {
          this.log.warn({ err }, 'could not fan out an event; it will be redelivered');
          m.nak(1000);
        }
      }
    })();
  }

  async fanOut(event: DomainEvent): Promise<void> {
    const body = webhookBody(event);
    for (const endpoint of await this.endpoints.enabledOf(event.account_id)) {
      if (!subscribes(endpoint.events, event.type)) continue;
      await this.deliveries.record({
        _id: `dlv_${event.id.replace(/^evt_/, '')}_${endpoint._id.replace(/^we_/, '')}`,
        account_id: event.account_id,
        endpoint_id: endpoint._id,
        event_id: event.id,
        event_type: event.type,
        body,
        status: 'pending',
        attempts: 0,
        next_attempt_at: this.clock.now(),
        last_status_code: null,
        last_error: null,
        last_latency_ms: null,
        created_at: this.clock.now(),
        delivered_at: null,
      });
    }
  }

  async stop(): Promise<void> {
    await this.messages?.close().catch(() => undefined);
  }
}
