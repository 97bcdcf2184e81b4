import { randomBytes } from 'node:crypto';
import { AckPolicy, DeliverPolicy, connect, createInbox, type NatsConnection } from 'nats';
import type { JetStreamManager, StreamConfig, StreamInfo } from 'nats';
import {
  NOTIFICATION_MAIL_CONSUMER,
  inboxPrefixOf,
  natsLogins,
  natsServerConfig,
  natsUsers,
  WEBHOOK_FANOUT_CONSUMER,
  type NatsLogin,
} from '@licensing/runtime';
import { client, startStack, testTopology, type Stack } from '../support/stack';
import { PrivateNats } from '../support/nats-server';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';
import { expectCacheFollows } from '../support/metrics';

// The whole system over a nats-server started with the generated configuration:
// one user per component, each allowed only its own subjects. The system works
// as usual, a service cannot publish another's events, and an event forged on
// a subject of one's own never reaches a webhook endpoint.
// Own stack: it runs over a nats-server of its own with one user per component, and stops a service.
const base = testTopology({ eventsRetentionHours: 24 });
const passwords = Object.fromEntries(natsLogins.map((u) => [u, randomBytes(18).toString('hex')])) as Record<
  NatsLogin,
  string
>;
/** The licence service's next password, on its alternate login (docs/operations.md, "Rotating secrets"). */
const licenseAlt = randomBytes(18).toString('hex');
let nats: PrivateNats;
let stack: Stack;
let receiver: WebhookReceiver;
let api: ReturnType<typeof client>;
let accountId: string;
let productId: string;
const connections: NatsConnection[] = [];

/** A connection as one component's user (or the set-up step's), collecting the errors the server reports. */
async function as(user: NatsLogin) {
  const errors: string[] = [];
  const nc = await connect({ servers: nats.url, user, pass: passwords[user], inboxPrefix: inboxPrefixOf(user) });
  connections.push(nc);
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') errors.push(String(s.data));
  })();
  return { nc, errors };
}

const forged = (type: string, id: string) =>
  JSON.stringify({
    id,
    type,
    account_id: accountId,
    created_at: new Date().toISOString(),
    data: {
      checkout: { id: 'cs_forged', product_id: productId, status: 'complete' },
      license_key: 'FORGED',
      customer_email: 'thief@example.com',
    },
  });

beforeAll(async () => {
  nats = await PrivateNats.startWithConfig((port, storeDir) =>
    natsServerConfig({
      prefix: base.subjectPrefix,
      stream: base.stream,
      passwords,
      alternates: { license: licenseAlt },
      port,
      storeDir,
    }),
  );
  receiver = await WebhookReceiver.start();
  stack = await startStack({ ...base, natsUrl: nats.url, natsPasswords: { ...passwords, license_alt: licenseAlt } });
  const acct = await stack.newAccount();
  accountId = acct.accountId;
  api = client(stack.url, acct.apiKey);
  productId = (await api('POST', '/api/v1/products', { name: 'Guarded' })).body.id;
  expect((await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/all`, events: ['*'] })).status).toBe(201);
});

afterAll(async () => {
  for (const nc of connections) await nc.close().catch(() => undefined);
  await receiver?.stop();
  await stack?.stop();
  await nats?.stop();
});

it('refuses a client without credentials', async () => {
  await expect(connect({ servers: nats.url, reconnect: false })).rejects.toThrow(/authorization/i);
});

it("refuses a service publishing another service's subject, or reading events it does not consume", async () => {
  const license = await as('license');
  const js = license.nc.jetstream({ timeout: 1000 });
  // The server drops the message (the webhook test below checks it never reaches an endpoint) and says why.
  await expect(
    js.publish(
      `${base.subjectPrefix}.checkout.completed`,
      forged('checkout.completed', `evt_forged_${randomBytes(4).toString('hex')}`),
    ),
  ).rejects.toThrow();
  await eventually(() => expect(license.errors).toContain('PERMISSIONS_VIOLATION'));
  const refused = await new Promise<Error>((resolve) =>
    license.nc.subscribe(`${base.subjectPrefix}.>`, { callback: (err) => err && resolve(err) }),
  );
  expect(refused.message).toMatch(/permissions violation for subscription/i);
  expect(refused.message).toContain(`${base.subjectPrefix}.>`);
  // Nobody but the webhook fan-out reads the stream, and nobody may delete it.
  const gateway = await as('gateway');
  const jsm = await gateway.nc.jetstreamManager({ timeout: 1000 });
  await expect(jsm.streams.delete(base.stream)).rejects.toThrow();
  await expect(jsm.streams.getMessage(base.stream, { seq: 1 })).rejects.toThrow();
  await eventually(() => expect(gateway.errors).toContain('PERMISSIONS_VIOLATION'));
  // A cache follows only its own events from the stream: a consumer of anything else is refused, and
  // so is a request in the name of the webhook fan-out's consumer.
  const follower = (name: string, events: string) => ({
    name,
    deliver_subject: createInbox(inboxPrefixOf('gateway')),
    deliver_policy: DeliverPolicy.New,
    ack_policy: AckPolicy.None,
    filter_subject: `${base.subjectPrefix}.${events}`,
  });
  await expect(jsm.consumers.add(base.stream, follower('snoop-1', 'checkout.completed'))).rejects.toThrow();
  await expect(jsm.consumers.add(base.stream, follower('snoop-2', '>'))).rejects.toThrow();
  await expect(jsm.consumers.add(base.stream, follower(WEBHOOK_FANOUT_CONSUMER, 'license.>'))).rejects.toThrow();
  expect((await jsm.consumers.add(base.stream, follower('follows-licences', 'license.>'))).name).toBe(
    'follows-licences',
  );
  const info = await jsm.streams.info(base.stream);
  expect(info.state.messages).toBeGreaterThan(0);
  // The retention is the setting's (EVENTS_RETENTION_HOURS), not a week.
  expect(info.config.max_age).toBe(24 * 3600 * 1e9);
});

/** The configuration, sealed: no message could ever be added or removed again. */
const sealed = (config: StreamConfig): StreamConfig => ({ ...config, sealed: true });

/**
 * Every way to change the stream through the JetStream API, each otherwise valid: what became of it,
 * 'refused' when the server refused it for want of permission.
 */
async function tryToManage(jsm: JetStreamManager, info: StreamInfo) {
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'done',
      (err: Error) => (/permissions violation/i.test(err.message) ? 'refused' : err.message),
    );
  const [seal, shrink, create, purge, remove, other] = await Promise.all([
    outcome(jsm.streams.update(base.stream, sealed(info.config))),
    outcome(jsm.streams.update(base.stream, { ...info.config, max_age: 3600 * 1e9, max_msgs: 1 })),
    // The same configuration again: what a component making sure of the stream at start would send.
    outcome(jsm.streams.add(info.config)),
    outcome(jsm.streams.purge(base.stream)),
    outcome(jsm.streams.delete(base.stream)),
    outcome(jsm.streams.add({ name: `${base.stream}_OTHER`, subjects: [`${base.subjectPrefix}_other.>`] })),
  ]);
  return { seal, shrink, create, purge, delete: remove, other };
}

it('no component may create, change, seal, purge or delete the stream, the gateway included: only the set-up step makes it', async () => {
  const before = await (await (await as('setup')).nc.jetstreamManager()).streams.info(base.stream);
  for (const user of natsUsers) {
    const { nc } = await as(user);
    const jsm = await nc.jetstreamManager({ timeout: 1000 });
    // Each component may look at the stream (it checks at start that the set-up step made it)...
    const info = await jsm.streams.info(base.stream);
    // ...and nothing else.
    expect({ user, ...(await tryToManage(jsm, info)) }).toEqual({
      user,
      seal: 'refused',
      shrink: 'refused',
      create: 'refused',
      purge: 'refused',
      delete: 'refused',
      other: 'refused',
    });
  }
  // The set-up step may create it and change its retention (what `events-setup` does), never purge or delete it.
  const setup = await as('setup');
  const jsm = await setup.nc.jetstreamManager({ timeout: 1000 });
  await expect(jsm.streams.purge(base.stream)).rejects.toThrow(/permissions violation/i);
  await expect(jsm.streams.delete(base.stream)).rejects.toThrow(/permissions violation/i);
  await expect(
    jsm.streams.add({ name: `${base.stream}_OTHER`, subjects: [`${base.subjectPrefix}_other.>`] }),
  ).rejects.toThrow(/permissions violation/i);
  await jsm.streams.update(base.stream, before.config);
  const after = await jsm.streams.info(base.stream);
  expect(after.config).toMatchObject({ subjects: [`${base.subjectPrefix}.>`], max_age: 24 * 3600 * 1e9 });
  expect(after.config.sealed ?? false).toBe(false);
  expect(after.state.messages).toBeGreaterThanOrEqual(before.state.messages);
});

it("the gateway and the licence service, which follow events for their caches, may not touch the webhook fan-out's consumer", async () => {
  for (const user of ['gateway', 'license'] as const) {
    const { nc } = await as(user);
    // The webhook fan-out's durable consumer is the webhook service's alone: not to be read, changed or deleted.
    const jsm = await nc.jetstreamManager({ timeout: 1000 });
    await expect(jsm.consumers.info(base.stream, WEBHOOK_FANOUT_CONSUMER)).rejects.toThrow();
    await expect(jsm.consumers.delete(base.stream, WEBHOOK_FANOUT_CONSUMER)).rejects.toThrow();
    await expect(
      jsm.consumers.add(base.stream, { durable_name: WEBHOOK_FANOUT_CONSUMER, ack_policy: AckPolicy.None }),
    ).rejects.toThrow();
  }
  // Nobody else creates consumers.
  const account = await as('account');
  const jsm = await account.nc.jetstreamManager({ timeout: 1000 });
  await expect(jsm.consumers.add(base.stream, { name: 'reader', ack_policy: AckPolicy.None })).rejects.toThrow();
  // And the fan-out still delivers (the next test).
});

it("the notification service's consumers read only their own event type: their filter subject cannot be changed", async () => {
  const notification = await as('notification');
  const jsm = await notification.nc.jetstreamManager({ timeout: 1000 });
  const own = `${base.subjectPrefix}.checkout.completed`;
  expect((await jsm.consumers.info(base.stream, NOTIFICATION_MAIL_CONSUMER)).config.filter_subject).toBe(own);
  // Another event type, or every event, through the API subject that names the filter...
  for (const filter_subject of [`${base.subjectPrefix}.license.created`, `${base.subjectPrefix}.>`])
    await expect(jsm.consumers.update(base.stream, NOTIFICATION_MAIL_CONSUMER, { filter_subject })).rejects.toThrow();
  // ...or through the forms whose subject names no filter (the filter only in the request).
  const request = (subject: string) =>
    notification.nc.request(
      subject,
      JSON.stringify({
        stream_name: base.stream,
        config: {
          durable_name: NOTIFICATION_MAIL_CONSUMER,
          ack_policy: 'explicit',
          deliver_policy: 'all',
          filter_subject: `${base.subjectPrefix}.>`,
        },
        action: 'update',
      }),
      { timeout: 1000 },
    );
  await expect(request(`$JS.API.CONSUMER.CREATE.${base.stream}.${NOTIFICATION_MAIL_CONSUMER}`)).rejects.toThrow();
  await expect(
    request(`$JS.API.CONSUMER.DURABLE.CREATE.${base.stream}.${NOTIFICATION_MAIL_CONSUMER}`),
  ).rejects.toThrow();
  await eventually(() => expect(notification.errors).toContain('PERMISSIONS_VIOLATION'));
  // Its own filter, as the service sets it at start, is still allowed; nothing changed.
  await jsm.consumers.update(base.stream, NOTIFICATION_MAIL_CONSUMER, { ack_wait: 5e9, filter_subject: own });
  expect((await jsm.consumers.info(base.stream, NOTIFICATION_MAIL_CONSUMER)).config.filter_subject).toBe(own);
});

it('never delivers a forged event to a webhook endpoint, while real events still arrive', async () => {
  const license = await as('license');
  const js = license.nc.jetstream({ timeout: 2000 });
  const forgedId = `evt_forged_${randomBytes(4).toString('hex')}`;
  // Allowed subject (the licence service's own), forged type: accepted by NATS, refused by the fan-out.
  await js.publish(`${base.subjectPrefix}.license.created`, forged('checkout.completed', forgedId), {
    msgID: forgedId,
  });
  // A real event after it: once it is delivered, the forged one (earlier in the stream) has been handled too.
  const created = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'real@example.com' });
  expect(created.status).toBe(201);
  await eventually(() => expect(receiver.at('/all').map((r) => JSON.parse(r.body).type)).toContain('license.created'), {
    timeoutMs: 15_000,
  });
  const bodies = receiver.at('/all').map((r) => r.body);
  expect(bodies.some((b) => b.includes(forgedId) || b.includes('FORGED'))).toBe(false);
  expect(bodies.map((b) => JSON.parse(b).type)).not.toContain('checkout.completed');
});

it('the caches follow their events under these permissions: answers from memory, and a suspend reaches them', async () => {
  const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'cached@example.com' }))
    .body.license_key as string;
  await expectCacheFollows({
    metricsUrl: stack.metricsUrls.gateway,
    code: async () => (await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.code as string,
    suspend: async () => (await api('POST', `/api/v1/licenses/${key}/suspend`)).status,
    timeoutMs: 10_000,
  });
});

it('a NATS password rotates with an overlap: the licence service moves to its alternate login, events still flow', async () => {
  // One replica on the new login beside the one on the old (a rollout under way), then only the new.
  Object.assign(stack.topology, { natsUsers: { license: 'license_alt' } });
  const extra = await stack.extraService('license');
  expect(extra.addr).toMatch(/^127\.0\.0\.1:/);
  await stack.stopService('license');
  await stack.restartService('license');
  const created = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'alt@example.com' });
  expect(created.status).toBe(201);
  await eventually(
    () =>
      expect(
        receiver
          .at('/all')
          .map((r) => JSON.parse(r.body))
          .some((e) => e.type === 'license.created' && e.data.license.key === created.body.license_key),
      ).toBe(true),
    { timeoutMs: 30_000 },
  );
  // The alternate has exactly the licence service's rights: not another's subjects.
  const errors: string[] = [];
  const alt = await connect({
    servers: nats.url,
    user: 'license_alt',
    pass: licenseAlt,
    inboxPrefix: inboxPrefixOf('license_alt'),
  });
  connections.push(alt);
  void (async () => {
    for await (const s of alt.status()) if (s.type === 'error') errors.push(String(s.data));
  })();
  alt.publish(`${base.subjectPrefix}.checkout.completed`, '{}');
  await alt.flush();
  await eventually(() => expect(errors).toContain('PERMISSIONS_VIOLATION'));
  // Logins without an alternate password have no alternate.
  await expect(
    connect({ servers: nats.url, user: 'gateway_alt', pass: passwords.gateway, reconnect: false }),
  ).rejects.toThrow(/authorization/i);
}, 120_000);
