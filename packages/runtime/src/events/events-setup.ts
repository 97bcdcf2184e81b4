// The deployment-time set-up of the event stream, shipped in the image:
//   node packages/runtime/dist/events/events-setup.js
// Creates the stream, or brings its retention and replicas to EVENTS_RETENTION_HOURS and
// EVENTS_REPLICAS, as the NATS set-up user (NATS_USER=setup), the only user allowed to; then exits 0. Compose runs it as a one-shot service
// before the components start, Kubernetes as the events-setup Job, `npm start` and the tests in
// process (setUpEventStream). Safe to run any number of times.
import { connect } from 'nats';
import { commonSchema, int, loadConfig, type ConfigOf } from '../core/config';
import { setUpEventStream } from './event-stream';
import { createLogger } from '../observability/logger';
import { inboxPrefixOf } from './nats-access';
import { natsServers } from './nats-servers';
import { untilConnected } from '../tasks/retry';

export const eventsSetupSchema = {
  LOG_LEVEL: commonSchema.LOG_LEVEL,
  NATS_URL: commonSchema.NATS_URL,
  NATS_USER: {
    ...commonSchema.NATS_USER,
    description:
      "The set-up step's NATS user (setup), the only one allowed to create the stream or change its retention; empty: connect without authentication (development)",
  },
  NATS_PASSWORD: commonSchema.NATS_PASSWORD,
  NATS_TLS_CA_FILE: commonSchema.NATS_TLS_CA_FILE,
  EVENTS_RETENTION_HOURS: commonSchema.EVENTS_RETENTION_HOURS,
  EVENTS_REPLICAS: int(
    'On how many nodes of the NATS cluster the event stream keeps every event: 1 for a single server (which refuses more), 3 for a cluster of three (a node may then die without losing an event or stopping publishing; docs/operations.md, "NATS cluster"); the set-up step makes or changes the stream to this (NATS changes an existing stream\'s replicas in place)',
    { default: 1, min: 1, max: 5 },
  ),
  EVENTS_SUBJECT_PREFIX: commonSchema.EVENTS_SUBJECT_PREFIX,
  EVENTS_STREAM: commonSchema.EVENTS_STREAM,
};

/** The set-up step's settings; EVENTS_REPLICAS may be left out (1: a single server). */
export type EventsSetupConfig = Omit<ConfigOf<typeof eventsSetupSchema>, 'EVENTS_REPLICAS'> & {
  EVENTS_REPLICAS?: number;
};

/** How long the step waits for NATS before it gives up (its orchestrator runs it again). */
const WAIT_FOR_NATS_MS = 60_000;

export async function runEventsSetup(config: EventsSetupConfig): Promise<string> {
  const log = createLogger('events-setup', config.LOG_LEVEL);
  const nc = await untilConnected(
    'NATS',
    log,
    () =>
      connect({
        servers: natsServers(config.NATS_URL),
        name: 'events-setup',
        ...(config.NATS_USER
          ? { user: config.NATS_USER, pass: config.NATS_PASSWORD, inboxPrefix: inboxPrefixOf(config.NATS_USER) }
          : {}),
        ...(config.NATS_TLS_CA_FILE ? { tls: { caFile: config.NATS_TLS_CA_FILE } } : {}),
        reconnect: false,
      }),
    { signal: AbortSignal.timeout(WAIT_FOR_NATS_MS), meanwhile: 'the stream is not set up yet' },
  );
  try {
    const outcome = await setUpEventStream(nc, {
      subjectPrefix: config.EVENTS_SUBJECT_PREFIX,
      stream: config.EVENTS_STREAM,
      retentionHours: config.EVENTS_RETENTION_HOURS,
      replicas: config.EVENTS_REPLICAS,
    });
    log.info(
      {
        stream: config.EVENTS_STREAM,
        retention_hours: config.EVENTS_RETENTION_HOURS,
        replicas: config.EVENTS_REPLICAS ?? 1,
        outcome,
      },
      'event stream set up',
    );
    return outcome;
  } finally {
    await nc.close();
  }
}

if (require.main === module)
  runEventsSetup(loadConfig(eventsSetupSchema, process.env)).then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`events-setup failed: ${err.message}`);
      process.exit(1);
    },
  );
