import type { EventType } from '@licensing/proto';

// Who may say what on NATS. Each component connects as its own user; the
// server lets it publish only the events it owns and subscribe only to what it
// consumes, so the subject an event arrives on proves who sent it. From this
// one table come the nats-server configuration (natsServerConfig) and the
// consumers' check (ownedBySubject).

/** One user per component of components.json (which this package cannot read at run time: test/unit/components.test.ts checks). */
export const natsUsers = ['account', 'product', 'license', 'checkout', 'webhook', 'gateway'] as const;
export type NatsUser = (typeof natsUsers)[number];

/** The owner of each event family (the part of the type before the dot). */
const familyOwners: Record<string, NatsUser> = {
  account: 'account',
  api_key: 'account',
  product: 'product',
  license: 'license',
  checkout: 'checkout',
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

/** The durable JetStream consumer of the webhook fan-out (the only reader of the stream). */
export const WEBHOOK_FANOUT_CONSUMER = 'webhook-fanout';

/** Each user's replies come to its own inbox prefix, so nobody can read another's replies (pulled stream messages included). */
export const inboxPrefixOf = (user: string): string => `_INBOX_${user}`;

export interface NatsPermissions {
  publish: string[];
  /** Denied even where `publish` allows (NATS applies deny first). */
  publishDeny: string[];
  subscribe: string[];
}

export function natsPermissions(user: NatsUser, prefix: string, stream: string): NatsPermissions {
  const owned = Object.entries(familyOwners)
    .filter(([, owner]) => owner === user)
    .map(([family]) => `${prefix}.${family}.>`);
  // Every component makes sure the stream exists with the configured retention; none may read, purge or delete it.
  const streamApi = [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.STREAM.UPDATE.${stream}`,
  ];
  const fanout =
    user === 'webhook'
      ? [
          `$JS.API.CONSUMER.CREATE.${stream}.${WEBHOOK_FANOUT_CONSUMER}`,
          `$JS.API.CONSUMER.CREATE.${stream}.${WEBHOOK_FANOUT_CONSUMER}.>`,
          `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${WEBHOOK_FANOUT_CONSUMER}`,
          `$JS.API.CONSUMER.INFO.${stream}.${WEBHOOK_FANOUT_CONSUMER}`,
          `$JS.API.CONSUMER.MSG.NEXT.${stream}.${WEBHOOK_FANOUT_CONSUMER}`,
          `$JS.ACK.${stream}.${WEBHOOK_FANOUT_CONSUMER}.>`,
        ]
      : [];
  // Creating a follower's consumer names its one filter subject in the API subject
  // (`$JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>`, checked by the server against the request), so
  // a user can read from the stream only the events it follows. It delivers to the user's own inbox.
  const followed = (follows[user] ?? []).map((s) => `$JS.API.CONSUMER.CREATE.${stream}.*.${prefix}.${s}`);
  return {
    publish: [...owned, ...streamApi, ...fanout, ...followed],
    // The fan-out's durable consumer is nobody else's to change through a create request in its name.
    publishDeny: followed.length ? [`$JS.API.CONSUMER.CREATE.${stream}.${WEBHOOK_FANOUT_CONSUMER}.>`] : [],
    subscribe: [`${inboxPrefixOf(user)}.>`, ...(consumes[user] ?? []).map((s) => `${prefix}.${s}`)],
  };
}

export interface NatsServerConfigOptions {
  prefix: string;
  stream: string;
  /** Each user's password, or a nats-server variable reference such as `$NATS_PASSWORD_ACCOUNT`. */
  passwords: Record<NatsUser, string>;
  port?: number;
  /** Where JetStream keeps the stream (absent: given on the command line, -sd). */
  storeDir?: string;
  /** TLS for clients: PEM certificate and key of the server (optional). */
  tls?: { cert: string; key: string };
}

const quote = (s: string) => (s.startsWith('$') ? s : JSON.stringify(s));

/** A nats-server configuration with one user per component and the permissions above (nothing for anyone else). */
export function natsServerConfig(o: NatsServerConfigOptions): string {
  const users = natsUsers.map((user) => {
    const p = natsPermissions(user, o.prefix, o.stream);
    const list = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
    const deny = p.publishDeny.length ? `, deny: ${list(p.publishDeny)}` : '';
    return `    { user: "${user}", password: ${quote(o.passwords[user])}, permissions: { publish: { allow: ${list(p.publish)}${deny} }, subscribe: { allow: ${list(p.subscribe)} } } }`;
  });
  return [
    '# Generated from packages/runtime/src/nats-access.ts (natsServerConfig): do not edit by hand.',
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
