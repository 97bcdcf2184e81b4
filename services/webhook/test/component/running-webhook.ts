import { randomBytes } from 'node:crypto';
import {
  WebhookServiceClient,
  type DomainEvent,
  type EventData,
  type EventType,
  type LicenseData,
  type WebhookDelivery,
} from '@licensing/proto';
import { EventBus, createClient, createLogger, newEvent, newId } from '@licensing/runtime';
import { start } from '../../src/main';
import { credentialOf, envFor, type Topology } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { freePort } from '../../../../scripts/lib/net';
import { TestClock, testTopology } from '../../../../test/support/stack';
import { WebhookReceiver } from '../../../../test/support/webhook-receiver';
import { dropDatabaseOf, stopWithin } from '@licensing/test-support';

// The webhook service alone, as its component tests run it: its own `start` over a test topology
// (real FerretDB and NATS), called over gRPC as the gateway calls it, fed the events it consumes by a
// publisher on the topology's stream (the event bus the services' outboxes publish through), and
// delivering to a real HTTP receiver. It calls no other service, so there is no peer to fake.

export type WebhookClient = ReturnType<typeof createClient<WebhookServiceClient>>;

export interface RunningWebhook {
  t: Topology;
  clock: TestClock;
  /** The service's gRPC API, called with the gateway's credential. */
  api: WebhookClient['call'];
  receiver: WebhookReceiver;
  /** Publishes an event onto the stream, as the service that owns it would. */
  publish(event: DomainEvent): Promise<void>;
  /** A `license.created` of the account, with the licence's key and e-mail. */
  licenceCreated(accountId: string, email?: string): Promise<{ key: string; event: DomainEvent<'license.created'> }>;
  /** An endpoint of the account at the receiver's `path`, with its secret. */
  endpoint(accountId: string, path: string, events: string[]): Promise<{ id: string; secret: string }>;
  /** The endpoint's delivery log, newest first. */
  deliveries(accountId: string, endpointId: string): Promise<WebhookDelivery[]>;
  /** Stops the service (the stream and the store stay); `startAgain` starts it on the same address. */
  stopService(): Promise<void>;
  startAgain(): Promise<void>;
  stop(): Promise<void>;
}

export const newAccount = () => newId('acct');

export async function startWebhook(overrides: Partial<Topology> = {}): Promise<RunningWebhook> {
  const t = testTopology(overrides);
  const clock = new TestClock();
  await setUpEvents(t);
  const port = await freePort(); // fixed, so a stopped service starts again where its client calls
  const env = envFor('webhook', t, { port, addrs: {} });
  let service: Awaited<ReturnType<typeof start>> | undefined = await start({ env, clock });
  const client = createClient(WebhookServiceClient, `127.0.0.1:${port}`, credentialOf(t, 'gateway'));
  const bus = await EventBus.connect({
    url: t.natsUrl,
    subjectPrefix: t.subjectPrefix,
    stream: t.stream,
    name: 'webhook-test-publisher',
    log: createLogger('webhook-test-publisher', 'silent'),
  });
  const receiver = await WebhookReceiver.start();
  const publish = (event: DomainEvent) => bus.publish(event);

  const running: RunningWebhook = {
    t,
    clock,
    api: client.call,
    receiver,
    publish,
    async licenceCreated(accountId, email = 'hook@example.com') {
      const key = `LIC-${randomBytes(8).toString('hex').toUpperCase()}`;
      const license: LicenseData = {
        id: newId('lic'),
        key,
        product_id: newId('prod'),
        customer_email: email,
        status: 'active',
        expires_at: null,
        created_at: clock.now().toISOString(),
        entitlements: [],
      };
      const event = newEvent('license.created', accountId, { license }, clock.now());
      await publish(event);
      return { key, event };
    },
    async endpoint(accountId, path, events) {
      const out = await client.call.createEndpoint({
        account_id: accountId,
        url: `${receiver.url}${path}`,
        events,
        description: '',
      });
      return { id: out.endpoint!.id, secret: out.secret };
    },
    async deliveries(accountId, endpointId) {
      const out = await client.call.listDeliveries({
        account_id: accountId,
        endpoint_id: endpointId,
        page: { limit: 100, starting_after: '' },
      });
      return out.data;
    },
    async stopService() {
      await service?.stop();
      service = undefined;
    },
    async startAgain() {
      service = await start({ env, clock });
    },
    async stop() {
      client.close();
      if (service) await stopWithin('the webhook service', service.stop());
      await dropDatabaseOf(t.mongoUrl, `${t.dbPrefix}_webhook`);
      await receiver.stop();
      const jsm = await bus.nc.jetstreamManager();
      await jsm.streams.delete(t.stream).catch(() => undefined);
      await bus.close();
    },
  };
  return running;
}

/** Any other event type the service consumes, with the data its owner publishes. */
export const eventOf = <T extends EventType>(type: T, accountId: string, data: EventData[T], at = new Date()) =>
  newEvent(type, accountId, data, at);
