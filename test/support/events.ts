import { connect, type NatsConnection } from 'nats';
import type { DomainEvent } from '@licensing/proto';
import { EventBus, natsServers, runEventsSetup, type Logger } from '@licensing/runtime';
import { eventually } from './eventually';

/**
 * Reads a stack's event stream from the start with an ephemeral JetStream
 * consumer, so a test can wait for the events a request should have produced.
 */
export class EventLog {
  private readonly seen: DomainEvent[] = [];
  private readonly subjects: string[] = [];
  private stopConsuming: () => void = () => undefined;

  private constructor(private readonly nc: NatsConnection) {}

  /** `keep`: which events the log holds (a shared system's stream carries every file's). */
  static async open(
    natsUrl: string,
    stream: string,
    keep: (e: DomainEvent) => boolean = () => true,
  ): Promise<EventLog> {
    const nc = await connect({ servers: natsServers(natsUrl) });
    const log = new EventLog(nc);
    const js = nc.jetstream();
    const jsm = await nc.jetstreamManager();
    // The stream is created by the services at start; wait for it briefly.
    await eventually(() => jsm.streams.info(stream), { timeoutMs: 5000, intervalMs: 100 }).catch(() => undefined);
    const consumer = await js.consumers.get(stream); // ordered consumer, from the first message
    const messages = await consumer.consume();
    log.stopConsuming = () => messages.stop();
    void (async () => {
      for await (const m of messages) {
        const event = m.json<DomainEvent>();
        if (!keep(event)) continue;
        log.subjects.push(m.subject);
        log.seen.push(event);
      }
    })().catch(() => undefined);
    return log;
  }

  all(): DomainEvent[] {
    return [...this.seen];
  }

  subjectOf(id: string): string | undefined {
    const i = this.seen.findIndex((e) => e.id === id);
    return i >= 0 ? this.subjects[i] : undefined;
  }

  async waitFor(predicate: (e: DomainEvent) => boolean, timeoutMs = 10_000): Promise<DomainEvent> {
    return eventually(
      () => {
        const hit = this.seen.find(predicate);
        if (!hit)
          throw new Error(
            `no matching event within ${timeoutMs} ms; saw: ${this.seen.map((e) => e.type).join(', ') || 'nothing'}`,
          );
        return hit;
      },
      { timeoutMs, intervalMs: 50 },
    );
  }

  async close(): Promise<void> {
    this.stopConsuming();
    await this.nc.drain();
  }
}

/**
 * An event stream of a test's own (subjects `<subjects>.events.>`) on the test NATS server, set up as
 * the deployment's set-up step does, and a bus of a service publishing to it.
 */
export async function testEventBus(
  { subjects, stream }: { subjects: string; stream: string },
  name: string,
  log: Logger,
  natsUrl = testNatsUrl(),
) {
  const subjectPrefix = `${subjects}.events`;
  await runEventsSetup({
    LOG_LEVEL: 'silent',
    NATS_URL: natsUrl,
    NATS_USER: '',
    NATS_PASSWORD: '',
    NATS_TLS_CA_FILE: '',
    EVENTS_RETENTION_HOURS: 1,
    EVENTS_SUBJECT_PREFIX: subjectPrefix,
    EVENTS_STREAM: stream,
  });
  const bus = await EventBus.connect({ url: natsUrl, subjectPrefix, stream, name, log });
  return { bus, stream, subjectPrefix, natsUrl };
}

const testNatsUrl = () => process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** Waits until a durable consumer has read (and had acknowledged) everything its stream holds. */
export async function consumerDrained(
  nc: NatsConnection,
  stream: string,
  consumer: string,
  wait = { timeoutMs: 20_000, intervalMs: 50 },
): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await eventually(async () => {
    const info = await jsm.consumers.info(stream, consumer);
    expect(info.num_pending + info.num_ack_pending).toBe(0);
    expect(info.delivered.stream_seq).toBeGreaterThanOrEqual((await jsm.streams.info(stream)).state.last_seq);
  }, wait);
}
