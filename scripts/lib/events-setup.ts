import { runEventsSetup, NATS_SETUP_USER } from '@licensing/runtime';
import type { Topology } from './topology';

/**
 * The set-up step of a topology's event stream (`npm start`, the bench and the test stack run it
 * before any component starts): made, or its retention and replicas brought to the settings, as the
 * NATS set-up user when the server has a user per component. No component may do this itself.
 */
export function setUpEvents(t: Topology): Promise<string> {
  const password = t.natsPasswords?.[NATS_SETUP_USER];
  if (t.natsPasswords && !password) throw new Error(`natsPasswords has no password for the ${NATS_SETUP_USER} user`);
  return runEventsSetup({
    LOG_LEVEL: t.logLevel as never,
    NATS_URL: t.natsUrl,
    NATS_USER: password ? NATS_SETUP_USER : '',
    NATS_PASSWORD: password ?? '',
    NATS_TLS_CA_FILE: '',
    EVENTS_RETENTION_HOURS: t.eventsRetentionHours ?? 168,
    EVENTS_REPLICAS: t.eventsReplicas ?? 1,
    EVENTS_SUBJECT_PREFIX: t.subjectPrefix,
    EVENTS_STREAM: t.stream,
  });
}
