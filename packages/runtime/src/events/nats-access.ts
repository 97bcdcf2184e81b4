import type { EventType } from '@licensing/proto';

// Who may say what on NATS. Each component connects as its own user; the
// server lets it publish only the events it owns and subscribe only to what it
// consumes, so the subject an event arrives on proves who sent it. From this
// one table come the nats-server configuration (natsServerConfig) and the
// consumers' check (ownedBySubject).

/** One user per component of components.json (which this package cannot read at run time: test/repository/components.test.ts checks). */
export const natsUsers = ['account', 'product', 'webhook', 'license', 'checkout', 'notification', 'gateway'] as const;
export type NatsUser = (typeof natsUsers)[number];

/** The owner of each event family (the part of the type before the dot). */
const familyOwners: Record<string, NatsUser> = {
  account: 'account',
  api_key: 'account',
  // The account's own actions for the audit log (proto/events.ts, accountActionTypes).
  password: 'account',
  member: 'account',
  session: 'account',
  mfa: 'account',
  settings: 'account',
  product: 'product',
  // A product's releases are kept by the product service, with the products they belong to.
  release: 'product',
  license: 'license',
  // The licence service's own actions for the audit log (proto/events.ts, transferActionTypes): an
  // import or an export started, in its transfer module.
  import: 'license',
  export: 'license',
  // customer.erased: the licence service, which owns the licences the erasure is about, says it once per call.
  customer: 'license',
  checkout: 'checkout',
  // Subscriptions are the checkout service's (it owns the payments they follow).
  subscription: 'checkout',
  webhook: 'webhook',
};

/** The only component allowed to publish events of this type (undefined: nobody). */
export const ownerOf = (type: string): NatsUser | undefined => familyOwners[type.slice(0, type.indexOf('.'))];

/**
 * Core-NATS subscriptions per component (the webhook service reads the stream through its durable
 * consumer instead). The gateway's auth cache trusts an entry for a second at most, so a lost
 * api_key.revoked or account.updated costs no more than that: core NATS is enough for it.
 */
const consumes: Partial<Record<NatsUser, string[]>> = {
  gateway: ['account.updated', 'api_key.revoked'],
};

/**
 * Events read from the stream through ephemeral consumers of one subject each (EventBus.follow), by
 * caches whose entries live longer than the second a revocation may take: they must notice a lost
 * eviction (followed-events.ts). The gateway's validation cache, and the licence service's caches of
 * licences and of products.
 */
export const follows: Partial<Record<NatsUser, string[]>> = {
  gateway: ['license.>', 'product.updated'],
  license: ['license.>', 'product.updated'],
};

/** The durable JetStream consumer of the webhook fan-out. */
export const WEBHOOK_FANOUT_CONSUMER = 'webhook-fanout';
/** The durable JetStream consumer of the notification service: the events that ask for customer mail. */
export const NOTIFICATION_MAIL_CONSUMER = 'notification-mail';
/**
 * Its second: license.batch_completed, whose batch's send_email items it mails (a consumer has one
 * filter subject, which every NATS 2.x server supports).
 */
export const NOTIFICATION_BATCH_MAIL_CONSUMER = 'notification-batch-mail';
/** Its third: license.created, whose licence mail an API call asked for (send_email on the envelope). */
export const NOTIFICATION_CREATED_MAIL_CONSUMER = 'notification-created-mail';
/** Its fourth: license.rerolled, whose new key's mail an API call asked for (send_email on the envelope). */
export const NOTIFICATION_REROLLED_MAIL_CONSUMER = 'notification-rerolled-mail';

/** The durable JetStream consumer of the account service's audit log: every event of the stream. */
export const ACCOUNT_AUDIT_CONSUMER = 'account-audit';

/** A durable consumer and the one event type it reads (none: every event of the stream). */
interface DurableConsumer {
  name: string;
  eventType?: EventType;
}

/**
 * Each durable consumer's one owner: only it may create, change, pull from or acknowledge it, and only
 * with its own filter subject (a consumer of one event type cannot be turned into a reader of others).
 */
const durableConsumers: Partial<Record<NatsUser, DurableConsumer[]>> = {
  webhook: [{ name: WEBHOOK_FANOUT_CONSUMER }],
  account: [{ name: ACCOUNT_AUDIT_CONSUMER }],
  notification: [
    { name: NOTIFICATION_MAIL_CONSUMER, eventType: 'checkout.completed' },
    { name: NOTIFICATION_BATCH_MAIL_CONSUMER, eventType: 'license.batch_completed' },
    { name: NOTIFICATION_CREATED_MAIL_CONSUMER, eventType: 'license.created' },
    { name: NOTIFICATION_REROLLED_MAIL_CONSUMER, eventType: 'license.rerolled' },
  ],
};

/** The filter subject a durable consumer must have (undefined: it has none, it reads every event). */
export function durableFilterOf(prefix: string, name: string): string | undefined {
  const found = Object.values(durableConsumers)
    .flat()
    .find((c) => c.name === name);
  return found?.eventType ? `${prefix}.${found.eventType}` : undefined;
}

/**
 * The user of the deployment-time set-up step (events-setup: npm start's launcher, the compose
 * one-shot, the Kubernetes Job, the test stack): the only one that may create the event stream or
 * change its retention. No component may: the internet-facing gateway cannot seal, shrink or
 * re-subject the stream, and neither can any service.
 */
export const NATS_SETUP_USER = 'setup';
/** Everyone with a login on the NATS server: the components and the set-up step. */
export const natsLogins = [...natsUsers, NATS_SETUP_USER] as const;
export type NatsLogin = (typeof natsLogins)[number];

/**
 * Each login also exists as `<login>_alt`, with the same permissions and its own password, so a
 * password is rotated with an overlap (docs/operations.md, "Rotating secrets"): the new password is
 * given to the login not in use, the component moves to it pod by pod, and the old one is retired.
 * A NATS user has one password; two logins are how two are valid at once.
 */
export const NATS_ALTERNATE_SUFFIX = '_alt';

/** The login a NATS user name is (itself, or the login whose alternate it is). */
export const loginOf = (user: string): string =>
  user.endsWith(NATS_ALTERNATE_SUFFIX) ? user.slice(0, -NATS_ALTERNATE_SUFFIX.length) : user;

/** Each user's replies come to its own inbox prefix, so nobody can read another's replies (pulled stream messages included); a login and its alternate share it. */
export const inboxPrefixOf = (user: string): string => `_INBOX_${loginOf(user)}`;

export interface NatsPermissions {
  publish: string[];
  /** Subjects refused even where `publish` would allow them (NATS applies deny first). */
  publishDeny: string[];
  subscribe: string[];
}

/** The JetStream API of one consumer, in every form: look at it, create or update it, pull from it, delete it. */
const consumerApi = (stream: string, name: string) => [
  `$JS.API.CONSUMER.CREATE.${stream}.${name}`,
  `$JS.API.CONSUMER.CREATE.${stream}.${name}.>`,
  `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${name}`,
  `$JS.API.CONSUMER.INFO.${stream}.${name}`,
  `$JS.API.CONSUMER.MSG.NEXT.${stream}.${name}`,
  `$JS.API.CONSUMER.DELETE.${stream}.${name}`,
];

/**
 * What the owner of a durable consumer may do with it: look at it, pull from it, and create or update
 * it only through the subject that names its filter (`$JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>`,
 * which the server checks against the request's filter_subject). The forms whose subject names no
 * filter (`…CREATE.<stream>.<name>`, the older `…DURABLE.CREATE…`) would take any filter in the request,
 * so they are allowed only to a consumer that has none (it reads every event anyway).
 */
function ownedConsumerApi(stream: string, prefix: string, c: DurableConsumer): string[] {
  const create = c.eventType
    ? [`$JS.API.CONSUMER.CREATE.${stream}.${c.name}.${prefix}.${c.eventType}`]
    : [`$JS.API.CONSUMER.CREATE.${stream}.${c.name}`];
  return [
    ...create,
    `$JS.API.CONSUMER.INFO.${stream}.${c.name}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${c.name}`,
    `$JS.ACK.${stream}.${c.name}.>`,
  ];
}

export function natsPermissions(user: NatsLogin, prefix: string, stream: string): NatsPermissions {
  // Reading the account's JetStream limits and the stream's configuration and state (never its messages).
  const look = ['$JS.API.INFO', `$JS.API.STREAM.INFO.${stream}`];
  if (user === NATS_SETUP_USER)
    return {
      // Creates the stream, or changes its retention; never deletes, purges or reads it.
      publish: [...look, `$JS.API.STREAM.CREATE.${stream}`, `$JS.API.STREAM.UPDATE.${stream}`],
      publishDeny: [],
      subscribe: [`${inboxPrefixOf(user)}.>`],
    };
  const owned = Object.entries(familyOwners)
    .filter(([, owner]) => owner === user)
    .map(([family]) => `${prefix}.${family}.>`);
  // Every component checks at start that the stream is there; none may create, change, purge or delete it.
  const own = durableConsumers[user as NatsUser] ?? [];
  const fanout = own.flatMap((c) => ownedConsumerApi(stream, prefix, c));
  // Creating a follower's consumer names its one filter subject in the API subject
  // (`$JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>`, checked by the server against the request), so
  // a user can read from the stream only the events it follows. It delivers to the user's own inbox.
  const followed = (follows[user as NatsUser] ?? []).map((s) => `$JS.API.CONSUMER.CREATE.${stream}.*.${prefix}.${s}`);
  return {
    publish: [...owned, ...look, ...fanout, ...followed],
    // The durable consumers are their owners' alone: a follower may not create or change one in its name.
    publishDeny: followed.length
      ? Object.values(durableConsumers)
          .flat()
          .flatMap(({ name }) => [...consumerApi(stream, name), `$JS.ACK.${stream}.${name}.>`])
      : [],
    subscribe: [`${inboxPrefixOf(user)}.>`, ...(consumes[user as NatsUser] ?? []).map((s) => `${prefix}.${s}`)],
  };
}

export interface NatsServerConfigOptions {
  prefix: string;
  stream: string;
  /** Each user's password (the set-up step's too), or a nats-server variable reference such as `$NATS_PASSWORD_ACCOUNT`. */
  passwords: Record<NatsLogin, string>;
  /** The passwords of the alternate logins (`<login>_alt`, same permissions) that exist; absent: none. */
  alternates?: Partial<Record<NatsLogin, string>>;
  port?: number;
  /** Where JetStream keeps the stream (absent: given on the command line, -sd). */
  storeDir?: string;
  /** TLS for clients: PEM certificate and key of the server (optional). */
  tls?: { cert: string; key: string };
}

const quote = (s: string) => (s.startsWith('$') ? s : JSON.stringify(s));

/** A nats-server configuration with one user per component and the set-up step's, and the permissions above (nothing for anyone else). */
export function natsServerConfig(o: NatsServerConfigOptions): string {
  const users = natsLogins.flatMap((user) => {
    const p = natsPermissions(user, o.prefix, o.stream);
    const list = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
    const deny = p.publishDeny.length ? `, deny: ${list(p.publishDeny)}` : '';
    const permissions = `permissions: { publish: { allow: ${list(p.publish)}${deny} }, subscribe: { allow: ${list(p.subscribe)} } }`;
    const alternate = o.alternates?.[user];
    return [
      `    { user: "${user}", password: ${quote(o.passwords[user])}, ${permissions} }`,
      ...(alternate
        ? [`    { user: "${user}${NATS_ALTERNATE_SUFFIX}", password: ${quote(alternate)}, ${permissions} }`]
        : []),
    ];
  });
  return [
    '# Generated from packages/runtime/src/events/nats-access.ts (natsServerConfig): do not edit by hand.',
    ...(o.port !== undefined ? [`port: ${o.port}`] : []),
    o.storeDir ? `jetstream: { store_dir: ${JSON.stringify(o.storeDir)} }` : 'jetstream: enabled',
    ...(o.tls ? [`tls: { cert_file: ${JSON.stringify(o.tls.cert)}, key_file: ${JSON.stringify(o.tls.key)} }`] : []),
    'authorization: {',
    '  users: [',
    users.join(',\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
}

/**
 * Whether an event came on the subject of its own type, which only its owner
 * may publish: `<prefix>.<type>`. A body claiming another type (a licence
 * service saying "checkout.completed") is not believed.
 */
export function ownedBySubject(prefix: string, subject: string, type: EventType | string): boolean {
  return subject === `${prefix}.${type}` && ownerOf(type) !== undefined;
}
