import { RetentionPolicy, StorageType, type NatsConnection } from 'nats';

// The event stream is made at deployment time, by the set-up step (events-setup.ts: npm start's
// launcher, the compose one-shot, the Kubernetes Job, the test stack) as the NATS set-up user. The
// components only check it is there: none may create, change, purge or delete it (nats-access.ts).

export interface EventStreamSettings {
  subjectPrefix: string;
  stream: string;
  /** How long the stream keeps events, in hours (default a week). */
  retentionHours?: number;
  /**
   * On how many nodes of a JetStream cluster the stream keeps every event (default 1: a single server,
   * which refuses more). 3 on a cluster of three: a node's loss loses no event and stops nothing.
   */
  replicas?: number;
}

export type StreamSetUp =
  | 'created'
  | 'retention changed'
  | 'replicas changed'
  | 'retention and replicas changed'
  | 'unchanged';

/** Nanoseconds, as JetStream counts max_age. */
export const retentionNanos = (hours = 168): number => hours * 3600 * 1e9;

/** What a component says when the stream is missing: it waits for the set-up step (it cannot make it). */
export const streamMissing = (stream: string): string =>
  `the event stream ${stream} does not exist: the set-up step creates it (npm start does; compose: the events-setup service; Kubernetes: the events-setup Job)`;

/**
 * Creates the event stream, or brings an existing one's retention and replicas to the settings.
 * Idempotent: run on every deployment (and by every `npm start`). Returns what it did.
 *
 * A JetStream cluster (NATS 2.9 and later) changes an existing stream's replicas in place: raised, the
 * new replicas copy what the stream holds from its leader; lowered, the extra ones are dropped. So a
 * stream made on one server keeps its events when the deployment grows to a cluster of three and the
 * set-up step runs again with EVENTS_REPLICAS=3.
 */
export async function setUpEventStream(nc: NatsConnection, s: EventStreamSettings): Promise<StreamSetUp> {
  const jsm = await nc.jetstreamManager({ timeout: 5000 });
  // The stream holds licence keys and e-mail addresses (docs/architecture.md): keep it short.
  const maxAge = retentionNanos(s.retentionHours);
  const replicas = s.replicas ?? 1;
  const info = await jsm.streams.info(s.stream).catch(() => undefined);
  if (info) {
    const retention = info.config.max_age !== maxAge;
    // A stream made before replicas were a setting may not say (it has one).
    const replication = (info.config.num_replicas || 1) !== replicas;
    if (!retention && !replication) return 'unchanged';
    await jsm.streams.update(s.stream, { ...info.config, max_age: maxAge, num_replicas: replicas });
    if (retention && replication) return 'retention and replicas changed';
    return retention ? 'retention changed' : 'replicas changed';
  }
  try {
    await jsm.streams.add({
      name: s.stream,
      subjects: [`${s.subjectPrefix}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: maxAge, // history for consumers that were down
      duplicate_window: Math.min(10 * 60 * 1e9, maxAge), // republished outbox entries within 10 min are dropped
      num_replicas: replicas,
    });
    return 'created';
  } catch (err) {
    // Another set-up run may have created it in the meantime.
    await jsm.streams.info(s.stream).catch(() => {
      throw err;
    });
    return 'unchanged';
  }
}

/**
 * Whether the stream is there, as a component sees it (STREAM.INFO is all it may ask): throws the
 * set-up step's message when it is missing; returns its retention in hours otherwise.
 */
export async function checkEventStream(nc: NatsConnection, stream: string): Promise<{ retentionHours: number }> {
  const jsm = await nc.jetstreamManager({ timeout: 2000 });
  const info = await jsm.streams.info(stream).catch((err: Error) => {
    if (/stream not found/i.test(err.message)) throw new Error(streamMissing(stream));
    throw err;
  });
  return { retentionHours: info.config.max_age / (3600 * 1e9) };
}
