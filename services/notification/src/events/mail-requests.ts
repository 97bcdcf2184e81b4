import { AckPolicy, DeliverPolicy, type ConsumerMessages } from 'nats';
import type { DomainEvent } from '@licensing/proto';
import {
  NOTIFICATION_MAIL_CONSUMER,
  consumeTraced,
  newId,
  type Clock,
  type EventBus,
  type Logger,
  type Tracing,
} from '@licensing/runtime';
import { queuedPurchaseMail, type EmailStore } from '../store/emails';

/** Its name is in the notification user's NATS permissions (packages/runtime/src/events/nats-access.ts). */
export const MAIL_CONSUMER = NOTIFICATION_MAIL_CONSUMER;
/** The event that asks for a customer e-mail (mail asked through the API is queued by the gRPC call itself). */
export const MAIL_EVENT = 'checkout.completed';
const ACK_WAIT_NS = 5e9;
const PULL_EXPIRES_MS = 2000;

/** Whether a purchase e-mail goes out for a product: its email_on_purchase setting (undefined: the product is gone). */
export type PurchaseMailWanted = (accountId: string, productId: string) => Promise<boolean>;

/**
 * A durable JetStream consumer of the events that ask for mail. Each is
 * written to the mail queue (the emails collection) before the message is
 * acknowledged, keyed by the event id (a unique index): a redelivered event (the
 * instance died before its ack, or the publisher sent it twice) finds its
 * mail already there and adds none. Sending is the sender job's
 * (jobs/sender.ts), so nothing here waits on the SMTP server.
 */
export class MailRequests {
  private messages?: ConsumerMessages;

  constructor(
    private readonly bus: EventBus,
    private readonly stream: string,
    private readonly emails: EmailStore,
    private readonly wanted: PurchaseMailWanted,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** When on: a traced event's mail is queued in a consumer span of its trace. */
    private readonly tracing?: Tracing,
  ) {}

  async start(): Promise<void> {
    const jsm = await this.bus.nc.jetstreamManager();
    // One subject: a consumer of a single filter subject works on every NATS 2.x server (filter_subjects needs 2.10).
    const filter_subject = this.bus.subject(MAIL_EVENT);
    await jsm.consumers
      .add(this.stream, {
        durable_name: MAIL_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        // From the first event the stream still holds: a purchase made before this service first ran gets its mail too.
        deliver_policy: DeliverPolicy.All,
        ack_wait: ACK_WAIT_NS,
        max_deliver: -1,
        filter_subject,
      })
      .catch(async () =>
        jsm.consumers
          .update(this.stream, MAIL_CONSUMER, { ack_wait: ACK_WAIT_NS, filter_subject })
          .catch(() => jsm.consumers.info(this.stream, MAIL_CONSUMER)),
      );
    const consumer = await this.bus.nc.jetstream().consumers.get(this.stream, MAIL_CONSUMER);
    // Short pull requests, as the webhook fan-out's (services/webhook/src/events/fanout.ts): a stopped
    // instance's request expires within 2 s instead of holding events until ack_wait.
    this.messages = await consumer.consume({ max_messages: 50, expires: PULL_EXPIRES_MS });
    void (async () => {
      for await (const m of this.messages!) {
        try {
          const event = this.bus.eventOf(m.subject, m.data);
          if (event) await consumeTraced(this.tracing, m, event, () => this.handle(event));
          m.ack();
        } catch (err) {
          this.log.warn({ err }, 'could not queue the mail of an event; it will be redelivered');
          m.nak(1000);
        }
      }
    })();
  }

  /** Queues the mail an event asks for (once per event). */
  async handle(event: DomainEvent): Promise<void> {
    if (event.type !== 'checkout.completed') return;
    const data = event.data as DomainEvent<'checkout.completed'>['data'];
    if (!data.customer_email || !data.license_key) return;
    if (!(await this.wanted(event.account_id, data.checkout.product_id))) return;
    const now = this.clock.now();
    const queued = await this.emails.record(
      queuedPurchaseMail(
        {
          _id: newId('eml'),
          request_key: event.id,
          account_id: event.account_id,
          to: data.customer_email,
          license_key: data.license_key,
        },
        now,
      ),
    );
    if (!queued) this.log.info({ event: event.id }, 'the mail of this event is already queued; not again');
  }

  async stop(): Promise<void> {
    await this.messages?.close().catch(() => undefined);
  }
}
