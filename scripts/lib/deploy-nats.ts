import { commonSchema, natsLogins, natsServerConfig, type NatsLogin } from '@licensing/runtime';

/** The environment variable deploy/nats/start.sh puts each user's password in (from its secret file). */
export const natsPasswordVariable = (user: NatsLogin | string): string => `NATS_PASSWORD_${user.toUpperCase()}`;

/**
 * deploy/nats/nats.conf: the NATS configuration of compose and Kubernetes, for
 * the default subject prefix and stream. `npm run docs` writes it; the deploy
 * tests check it is current.
 */
export function deployNatsConfig(): string {
  return natsServerConfig({
    prefix: commonSchema.EVENTS_SUBJECT_PREFIX.default!,
    stream: commonSchema.EVENTS_STREAM.default!,
    passwords: Object.fromEntries(natsLogins.map((u) => [u, `$${natsPasswordVariable(u)}`])) as Record<
      NatsLogin,
      string
    >,
    // Every login's alternate (for rotating its password with an overlap): start.sh gives one whose
    // secret file is absent a random password nobody knows.
    alternates: Object.fromEntries(natsLogins.map((u) => [u, `$${natsPasswordVariable(`${u}_alt`)}`])),
  });
}
