import { AckPolicy, DeliverPolicy, type ConsumerMessages } from 'nats';
import type { DomainEvent, GetLicenseBatchRequest, LicenseBatch } from '@licensing/proto';
import {
  NOTIFICATION_BATCH_MAIL_CONSUMER,
  NOTIFICATION_CREATED_MAIL_CONSUMER,
  NOTIFICATION_MAIL_CONSUMER,
  NOTIFICATION_REROLLED_MAIL_CONSUMER,
  consumeTraced,
  newId,
  type Clock,
  type EventBus,
  type Logger,
  type Tracing,
} from '@licensing/runtime';
import { isReachable } from '../domain/portal';
import { queuedPurchaseMail, type EmailStore } from '../store/emails';

/** Its name is in the notification user's NATS permissions (packages/runtime/src/events/nats-access.ts). */
export const MAIL_CONSUMER = NOTIFICATION_MAIL_CONSUMER;
/**
 * The event that asks for a purchase e-mail. The others that ask for mail have consumers of their own
 * (one filter subject each): license.batch_completed (BatchMailRequests), and license.created and
 * license.rerolled with send_email on their envelope (LicenseMailRequests).
 */
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
  /** The durable consumer and the one event type it reads (the subclasses read others). */
  protected consumerName: string = MAIL_CONSUMER;
  protected eventType: string = MAIL_EVENT;

  constructor(
    protected readonly bus: EventBus,
    private readonly stream: string,
    protected readonly emails: EmailStore,
    private readonly wanted: PurchaseMailWanted,
    protected readonly clock: Clock,
    protected readonly log: Logger,
    /** When on: a traced event's mail is queued in a consumer span of its trace. */
    private readonly tracing?: Tracing,
  ) {}

  async start(): Promise<void> {
    const name = this.consumerName;
    const jsm = await this.bus.nc.jetstreamManager();
    // One subject: a consumer of a single filter subject works on every NATS 2.x server (filter_subjects needs 2.10).
    const filter_subject = this.bus.subject(this.eventType);
    await jsm.consumers
      .add(this.stream, {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        // A durable made now starts now: the events the stream already holds (purchases and licences
        // before this version ran, mailed or not by the one before) ask for no mail, or an upgrade
        // would mail every past buyer. A durable that exists refuses this creation (its configuration
        // differs) and keeps its position: only ack_wait and its one filter subject are updated below.
        deliver_policy: DeliverPolicy.StartTime,
        opt_start_time: this.clock.now().toISOString(),
        ack_wait: ACK_WAIT_NS,
        max_deliver: -1,
        filter_subject,
      })
      .catch(async () =>
        jsm.consumers
          .update(this.stream, name, { ack_wait: ACK_WAIT_NS, filter_subject })
          .catch(() => jsm.consumers.info(this.stream, name)),
      );
    const consumer = await this.bus.nc.jetstream().consumers.get(this.stream, name);
    // Short pull requests, as the webhook fan-out's (services/webhook/src/events/fanout.ts): a stopped
    // instance's request expires within 2 s instead of holding events until ack_wait.
    this.messages = await consumer.consume({ max_messages: 50, expires: PULL_EXPIRES_MS });
    void (async () => {
      for await (const m of this.messages!) {
        try {
          const event = this.bus.eventOf(m.subject, m.data);
          // An event that asks for no mail is acknowledged without a span of its own.
          if (event && this.asksMail(event)) await consumeTraced(this.tracing, m, event, () => this.handle(event));
          m.ack();
        } catch (err) {
          this.log.warn({ err }, 'could not queue the mail of an event; it will be redelivered');
          m.nak(1000);
        }
      }
    })();
  }

  /** Whether the event may ask for mail at all (the licence events only with send_email on them). */
  protected asksMail(_event: DomainEvent): boolean {
    return true;
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

/** Reads a licence batch (the licence service's GetLicenseBatch). */
export type BatchLookup = (req: GetLicenseBatchRequest) => Promise<LicenseBatch>;

/**
 * The second durable consumer: license.batch_completed. The batch's issued items sent with
 * send_email each get the licence mail, queued before the event is acknowledged under a request key
 * per batch and item (unique), so a redelivered event queues none twice.
 */
export class BatchMailRequests extends MailRequests {
  protected override consumerName = NOTIFICATION_BATCH_MAIL_CONSUMER;
  protected override eventType = 'license.batch_completed' as const;

  constructor(
    bus: EventBus,
    stream: string,
    emails: EmailStore,
    private readonly batches: BatchLookup,
    clock: Clock,
    log: Logger,
    tracing?: Tracing,
  ) {
    super(bus, stream, emails, async () => true, clock, log, tracing);
  }

  override async handle(event: DomainEvent): Promise<void> {
    if (event.type !== 'license.batch_completed') return;
    const data = event.data as DomainEvent<'license.batch_completed'>['data'];
    const batch = await this.batches({ account_id: event.account_id, id: data.batch.id });
    const now = this.clock.now();
    for (const r of batch.results) {
      // An erased customer's item carries the placeholder (the licence service erases batches too): no mail.
      if (!r.send_email || r.status !== 'issued' || !r.key || !isReachable(r.customer_email)) continue;
      await this.emails.record(
        queuedPurchaseMail(
          {
            _id: newId('eml'),
            request_key: `batch:${batch.id}:${r.index}`,
            account_id: event.account_id,
            to: r.customer_email,
            license_key: r.key,
          },
          now,
        ),
      );
    }
  }
}

/** The licence events an API call can ask mail on (send_email), each read by its own durable consumer. */
export const LICENSE_MAIL_CONSUMERS = {
  'license.created': NOTIFICATION_CREATED_MAIL_CONSUMER,
  'license.rerolled': NOTIFICATION_REROLLED_MAIL_CONSUMER,
} as const;
export type LicenseMailEvent = keyof typeof LICENSE_MAIL_CONSUMERS;

/**
 * The durable consumers of license.created and license.rerolled (one each: a consumer has one filter
 * subject). The licence service writes `send_email` on the event's envelope in the same write as the
 * licence change, when the API call (POST /api/v1/licenses, POST /api/v1/licenses/{key}/reroll, the
 * dashboard's reroll) asked for the mail: the licence mail to the licence's customer_email, with the key
 * the event names (the new key of a reroll). Queued before the ack under the event id (unique), so a
 * redelivered event queues none twice; an event without `send_email` queues nothing.
 */
export class LicenseMailRequests extends MailRequests {
  constructor(
    type: LicenseMailEvent,
    bus: EventBus,
    stream: string,
    emails: EmailStore,
    clock: Clock,
    log: Logger,
    tracing?: Tracing,
  ) {
    super(bus, stream, emails, async () => true, clock, log, tracing);
    this.consumerName = LICENSE_MAIL_CONSUMERS[type];
    this.eventType = type;
  }

  protected override asksMail(event: DomainEvent): boolean {
    return event.type === this.eventType && event.send_email === true;
  }

  override async handle(event: DomainEvent): Promise<void> {
    if (!this.asksMail(event)) return;
    const { license } = event.data as DomainEvent<LicenseMailEvent>['data'];
    if (!license?.customer_email || !license.key) return;
    const queued = await this.emails.record(
      queuedPurchaseMail(
        {
          _id: newId('eml'),
          request_key: event.id,
          account_id: event.account_id,
          to: license.customer_email,
          license_key: license.key,
        },
        this.clock.now(),
      ),
    );
    if (!queued) this.log.info({ event: event.id }, 'the mail of this event is already queued; not again');
  }
}
