import { generateKeyPairSync, sign } from 'node:crypto';
import {
  Account,
  AccountServiceService,
  License,
  LicenseBatch,
  LicenseServiceService,
  NotificationServiceClient,
  Product,
  ProductServiceService,
  generateLicenseKey,
  type DomainEvent,
  type Email,
  type LicenseData,
} from '@licensing/proto';
import { AppError, EventBus, connectMongo, createClient, createLogger, newEvent, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer, dropDatabaseOf } from '@licensing/test-support';
import type { Connection } from 'mongoose';
import { start } from '../../src/main';
import { credentialOf, envFor, type Topology } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { freePort } from '../../../../scripts/lib/net';
import { SmtpInbox, type ReceivedMail } from '../../../../test/support/smtp-inbox';
import { TestClock, testTopology } from '../../../../test/support/stack';

// The notification service alone, as its component tests run it: its own `start` over a test topology
// (real FerretDB and NATS) sending to a real SMTP server (smtp-inbox.ts), called over gRPC as the gateway
// and the web component call it, fed the events it consumes on the topology's stream as the licence and
// checkout services publish them, and its peers (account, product, licence) faked at the gRPC boundary
// over what the test holds here: they answer as the real services would for those accounts, products,
// licences and batches.

export type NotificationClient = ReturnType<typeof createClient<NotificationServiceClient>>;

/** Where the mail's links point (the gateway's public address, PUBLIC_BASE_URL). */
export const PUBLIC_BASE_URL = 'http://licensing.test';
export const MAIL_WAIT = { timeoutMs: 20_000, intervalMs: 50 };

export interface RunningNotification {
  t: Topology;
  clock: TestClock;
  inbox: SmtpInbox;
  /** The service's gRPC API with the gateway's credential (the mail log, licence mail, seat rescue, erasure). */
  api: NotificationClient['call'];
  /** The same with the web component's credential (the portal's sign-in and sessions). */
  webApi: NotificationClient['call'];
  peers: {
    accounts: FakePeer<typeof AccountServiceService>;
    products: FakePeer<typeof ProductServiceService>;
    licenses: FakePeer<typeof LicenseServiceService>;
  };
  /** A vendor the fake account service knows: its id. */
  vendor(fields?: Partial<Account>): string;
  /** A product of the account the fake product service knows. */
  product(accountId: string, name: string, fields?: Partial<Product>): Product;
  /** A licence the fake licence service holds (issued with no event: see licenceCreated). */
  issue(accountId: string, productId: string, email: string): License;
  /** The licence the fake licence service holds under this key (a test changes it as the licence service would). */
  licence(accountId: string, key: string): License | undefined;
  /** The licence service's license.created of it, published; `sendEmail`: the API call asked for the mail. */
  licenceCreated(licence: License, sendEmail?: boolean): Promise<DomainEvent>;
  /** A reroll as the licence service makes it: the licence takes a new key, and license.rerolled is published. */
  reroll(licence: License, sendEmail?: boolean): Promise<DomainEvent>;
  /** A test-mode purchase as the checkout service completes it: the licence issued, checkout.completed published. */
  purchase(accountId: string, productId: string, email: string): Promise<{ licence: License; event: DomainEvent }>;
  /** A finished licence batch of these items, held by the fake, and its license.batch_completed published. */
  batchCompleted(
    accountId: string,
    productId: string,
    items: { customer_email: string; send_email: boolean }[],
  ): Promise<LicenseBatch>;
  /** Publishes an event onto the stream, as the service that owns it does. */
  publish(event: DomainEvent): Promise<void>;
  /** The `n`th mail to `address`, waited for. */
  mailTo(address: string, n?: number): Promise<ReceivedMail>;
  /** The account's mail log (newest first), as ListEmails answers it. */
  emails(accountId: string): Promise<Email[]>;
  /** The service's database on a connection of the test's own. */
  db(): Promise<Connection>;
  /** Where the service serves /metrics. */
  metricsUrl(): string;
  /** The settings the service runs with (for a process of it on the same address). */
  env: Record<string, string>;
  /** Stops the fake licence service at once (a crashed one); `startLicencesAgain` brings it back on its address. */
  stopLicences(): Promise<void>;
  startLicencesAgain(): Promise<void>;
  /** Stops the service (the stream, the store and the fakes stay); `startAgain` starts it on the same address. */
  stopService(): Promise<void>;
  startAgain(): Promise<void>;
  stop(): Promise<void>;
}

/** The signing key the fake licence service's files are signed with (the product service holds the real ones). */
const signingKey = generateKeyPairSync('ed25519');

/** A licence file as the licence service signs it: the licence's facts, Ed25519. */
function licenceFile(licence: License) {
  const payload = Buffer.from(
    JSON.stringify({
      license_key: licence.key,
      license_id: licence.id,
      product_id: licence.product_id,
      customer_email: licence.customer_email,
      status: licence.status,
      expires_at: licence.expires_at || null,
    }),
  );
  return {
    kid: 'kid_test',
    algorithm: 'Ed25519',
    payload: payload.toString('base64url'),
    signature: sign(null, payload, signingKey.privateKey).toString('base64url'),
  };
}

/** The licence as its events carry it. */
const licenceData = (l: License): LicenseData => ({
  id: l.id,
  key: l.key,
  product_id: l.product_id,
  customer_email: l.customer_email,
  status: 'active',
  expires_at: l.expires_at || null,
  created_at: l.created_at,
  entitlements: [],
});

/** The fake licence service over the licences and batches held here, answering as the real one does. */
function licenceHandlers(licences: License[], batches: LicenseBatch[]) {
  const own = (accountId: string, key: string) => {
    const found = licences.find((l) => l.account_id === accountId && l.key === key);
    if (!found) throw new AppError('not_found', 'licence not found');
    return found;
  };
  return {
    getLicense: ({ account_id, key }: { account_id: string; key: string }) => own(account_id, key),
    issueLicenseFile: ({ account_id, key }: { account_id: string; key: string }) => licenceFile(own(account_id, key)),
    holdsLicences: ({ account_id, email }: { account_id: string; email: string }) => ({
      holds: licences.some((l) => l.account_id === account_id && l.customer_email.toLowerCase() === email),
    }),
    getLicenseBatch: ({ account_id, id }: { account_id: string; id: string }) => {
      const found = batches.find((b) => b.account_id === account_id && b.id === id);
      if (!found) throw new AppError('not_found', 'batch not found');
      return found;
    },
  };
}

export async function startNotification(overrides: Partial<Topology> = {}): Promise<RunningNotification> {
  const inbox = await SmtpInbox.start();
  const t = testTopology({
    customerMailUrl: inbox.url,
    mailRetryScheduleS: Array(40).fill('0.3').join(','),
    mailSendIntervalMs: 100,
    mailSendTimeoutMs: 1500,
    portalCleanupIntervalMs: 200,
    ...overrides,
  });
  const clock = new TestClock();
  const accounts = new Map<string, Account>();
  const products: Product[] = [];
  const licences: License[] = [];
  const batches: LicenseBatch[] = [];
  const peers = {
    accounts: await startFakePeer(AccountServiceService, {
      getAccount: ({ id }) => {
        const found = accounts.get(id);
        if (!found) throw new AppError('not_found', `account ${id} not found`);
        return found;
      },
    }),
    products: await startFakePeer(ProductServiceService, {
      getProduct: ({ account_id, id }) => {
        const found = products.find((p) => p.id === id && p.account_id === account_id);
        if (!found) throw new AppError('not_found', `product ${id} not found`);
        return found;
      },
    }),
    licenses: await startFakePeer(LicenseServiceService, licenceHandlers(licences, batches)),
  };
  const licencesPort = peers.licenses.port;
  await setUpEvents(t);
  const port = await freePort(); // fixed, so a stopped service starts again where its clients call
  const env = envFor('notification', t, {
    port,
    addrs: { account: peers.accounts.address, product: peers.products.address, license: peers.licenses.address },
    publicBaseUrl: PUBLIC_BASE_URL,
  });
  let service: Awaited<ReturnType<typeof start>> | undefined = await start({ env, clock });
  const gateway = createClient(NotificationServiceClient, `127.0.0.1:${port}`, credentialOf(t, 'gateway'));
  const web = createClient(NotificationServiceClient, `127.0.0.1:${port}`, credentialOf(t, 'web'));
  const bus = await EventBus.connect({
    url: t.natsUrl,
    subjectPrefix: t.subjectPrefix,
    stream: t.stream,
    name: 'notification-test-publisher',
    log: createLogger('notification-test-publisher', 'silent'),
  });
  const publish = (event: DomainEvent) => bus.publish(event);
  const opened: Connection[] = [];

  const issue = (accountId: string, productId: string, email: string) => {
    const licence = License.fromPartial({
      id: newId('lic'),
      account_id: accountId,
      product_id: productId,
      key: generateLicenseKey(),
      customer_email: email,
      status: 'active',
      created_at: clock.now().toISOString(),
    });
    licences.push(licence);
    return licence;
  };
  const asked = (event: DomainEvent, sendEmail: boolean) =>
    sendEmail ? { ...event, send_email: true as const } : event;

  return {
    t,
    clock,
    inbox,
    api: gateway.call,
    webApi: web.call,
    peers,
    vendor(fields = {}) {
      const account = Account.fromPartial({
        id: newId('acct'),
        name: `Vendor ${newId('v').slice(-4)}`,
        plan: 'enterprise',
        created_at: clock.now().toISOString(),
        ...fields,
      });
      accounts.set(account.id, account);
      return account.id;
    },
    product(accountId, name, fields = {}) {
      const product = Product.fromPartial({
        id: newId('prod'),
        account_id: accountId,
        name,
        created_at: clock.now().toISOString(),
        email_on_purchase: true,
        ...fields,
      });
      products.push(product);
      return product;
    },
    issue,
    licence: (accountId, key) => licences.find((l) => l.account_id === accountId && l.key === key),
    async licenceCreated(licence, sendEmail = false) {
      const event = asked(
        newEvent('license.created', licence.account_id, { license: licenceData(licence) }, clock.now()),
        sendEmail,
      );
      await publish(event);
      return event;
    },
    async reroll(licence, sendEmail = false) {
      const previous = licence.key;
      licence.key = generateLicenseKey();
      const event = asked(
        newEvent(
          'license.rerolled',
          licence.account_id,
          {
            license: licenceData(licence),
            previous_key: previous,
            previous_key_valid_until: clock.now().toISOString(),
          },
          clock.now(),
          `evt_rerolled_${licence.id.slice(4)}_${clock.now().getTime()}`,
        ),
        sendEmail,
      );
      await publish(event);
      return event;
    },
    async purchase(accountId, productId, email) {
      const licence = issue(accountId, productId, email.toLowerCase());
      const sessionId = newId('cs');
      const now = clock.now();
      const event = newEvent(
        'checkout.completed',
        accountId,
        {
          checkout: {
            id: sessionId,
            product_id: productId,
            status: 'complete',
            amount: 4900,
            currency: 'EUR',
            customer_email: licence.customer_email,
            expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
            created_at: now.toISOString(),
            livemode: false,
          },
          license_key: licence.key,
          customer_email: licence.customer_email,
        },
        now,
        `evt_completed_${sessionId}`,
      );
      await publish(event);
      return { licence, event };
    },
    async batchCompleted(accountId, productId, items) {
      const now = clock.now().toISOString();
      const batch = LicenseBatch.fromPartial({
        id: newId('lb'),
        account_id: accountId,
        product_id: productId,
        status: 'done',
        total: items.length,
        issued: items.length,
        created_at: now,
        completed_at: now,
        results: items.map((item, index) => {
          const licence = issue(accountId, productId, item.customer_email);
          return { index, status: 'issued', license_id: licence.id, key: licence.key, ...item };
        }),
      });
      batches.push(batch);
      await publish(
        newEvent(
          'license.batch_completed',
          accountId,
          {
            batch: {
              id: batch.id,
              product_id: productId,
              total: batch.total,
              issued: batch.issued,
              failed: 0,
              created_at: now,
              completed_at: now,
            },
          },
          clock.now(),
        ),
      );
      return batch;
    },
    publish,
    mailTo: (address, n = 1) => inbox.mailTo(address, n, MAIL_WAIT),
    async emails(accountId) {
      return (await gateway.call.listEmails({ account_id: accountId, page: { limit: 100, starting_after: '' } })).data;
    },
    async db() {
      const conn = await connectMongo(t.mongoUrl, `${t.dbPrefix}_notification`);
      opened.push(conn);
      return conn;
    },
    metricsUrl: () => `http://127.0.0.1:${service?.metricsPort}/metrics`,
    env,
    stopLicences: () => peers.licenses.stop(),
    async startLicencesAgain() {
      peers.licenses = await startFakePeer(LicenseServiceService, licenceHandlers(licences, batches), {
        port: licencesPort,
      });
    },
    async stopService() {
      await service?.stop();
      service = undefined;
    },
    async startAgain() {
      service = await start({ env, clock });
    },
    async stop() {
      gateway.close();
      web.close();
      await Promise.all(opened.map((c) => c.close()));
      await service?.stop();
      // The service may have been stopped already, or replaced by a process.
      await dropDatabaseOf(t.mongoUrl, `${t.dbPrefix}_notification`);
      await Promise.all(Object.values(peers).map((p) => p.stop()));
      const jsm = await bus.nc.jetstreamManager();
      await jsm.streams.delete(t.stream).catch(() => undefined);
      await bus.close();
      await inbox.stop();
    },
  };
}
