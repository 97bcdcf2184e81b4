import {
  CreateLicenseRequest,
  LicenseServiceClient,
  Product,
  ProductServiceService,
  WebhookServiceService,
  type LicensePolicy,
} from '@licensing/proto';
import { AppError, connectMongo, createClient, createLogger, EventBus, newEvent, newId } from '@licensing/runtime';
import { AnswerGate, type FakePeer, startFakePeer, dropDatabaseOf, stopWithin } from '@licensing/test-support';
import { generateKeyPairSync, sign } from 'node:crypto';
import type { Connection } from 'mongoose';
import { start } from '../../src/main';
import { credentialOf, envFor, type Topology } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { TestClock, testTopology } from '../../../../test/support/stack';
import { EventLog } from '../../../../test/support/events';

// The licence service alone, as its component tests run it: its own `start` over a test topology (real
// FerretDB and NATS) with a clock the test moves, called over gRPC as the gateway (or the web component) calls it, its product
// service faked by products the test defines (and the webhook service, which it calls only for
// imports, faked with nothing).

export interface RunningLicense {
  t: Topology;
  clock: TestClock;
  /** host:port of the service's gRPC API, for a client of another caller (credentialOf(t, 'checkout')). */
  address: string;
  /** The service's gRPC API, called with the gateway's credential. */
  api: ReturnType<typeof createClient<LicenseServiceClient>>['call'];
  /** The same, with the web component's credential: the dashboard's and the customer portal's calls. */
  webApi: ReturnType<typeof createClient<LicenseServiceClient>>['call'];
  products: FakePeer<typeof ProductServiceService>;
  /** A product of `accountId` the fake product service answers with, under this policy (over the defaults). */
  product(accountId: string, policy?: Partial<LicensePolicy>): Product;
  /** Issues a licence of `productId` to `email`: its key. */
  issue(accountId: string, productId: string, email: string): Promise<string>;
  /**
   * Holds the product service's answers back until the returned function is called (a slow product
   * service, a failover): calls made meanwhile are answered then, as the real one would answer them.
   */
  holdProducts(): () => void;
  /**
   * The product changes as the product service changes it: the fake answers the new product from now
   * on, and product.updated is on the stream before this returns (the product service publishes it
   * before its answer), so a licence issued next sees the new policy.
   */
  updateProduct(product: Product, policy: Partial<LicensePolicy>): Promise<Product>;
  /** The product archived (or back on sale) as the product service does it: answered so, and product.updated on the stream. */
  setArchived(product: Product, archived: boolean): Promise<Product>;
  /** Another instance of the service over the same store, NATS and fakes (stopped with the rest). */
  extraInstance(): Promise<void>;
  /** Activates a machine: the activation's id. */
  activate(accountId: string, key: string, fingerprint: string): Promise<string>;
  /**
   * The service's database on a connection of the test's own, for what only the store shows (the
   * service's connection records every query shape for the index check: a test's look is not one).
   */
  db(): Promise<Connection>;
  stop(): Promise<void>;
}

const SIGNING_KID = 'kid_test';
const signingKey = generateKeyPairSync('ed25519');

export async function startLicense(): Promise<RunningLicense> {
  const t = testTopology();
  const clock = new TestClock();
  const known = new Map<string, Product>();
  const gate = new AnswerGate();
  const products = await startFakePeer(ProductServiceService, {
    getProduct: async ({ account_id, id }) => {
      await gate.passed();
      const found = known.get(id);
      if (!found || found.account_id !== account_id) throw AppError.notFound('product');
      return found;
    },
    // As the product service signs a licence file: the payload with its kid added, under the product's
    // key (one Ed25519 key for every product here).
    signPayload: ({ account_id, product_id, payload_json }) => {
      const found = known.get(product_id);
      if (!found || found.account_id !== account_id) throw AppError.notFound('product');
      const payload = Buffer.from(JSON.stringify({ ...JSON.parse(payload_json), kid: SIGNING_KID }));
      return { kid: SIGNING_KID, payload, signature: sign(null, payload, signingKey.privateKey) };
    },
  });
  const webhooks = await startFakePeer(WebhookServiceService, {});
  await setUpEvents(t);
  const env = envFor('license', t, { port: 0, addrs: { product: products.address, webhook: webhooks.address } });
  const service = await start({ env, clock });
  const extra: Array<Awaited<ReturnType<typeof start>>> = [];
  // What the product service publishes, on the same stream (created on first use).
  let productBus: EventBus | undefined;
  const client = createClient(LicenseServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
  const opened: Connection[] = [];
  const web = createClient(LicenseServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'web'));
  /** The fake answers the changed product from now on; product.updated is on the stream before this returns. */
  const changeProduct = async (updated: Product): Promise<Product> => {
    known.set(updated.id, updated);
    productBus ??= await EventBus.connect({
      url: t.natsUrl,
      subjectPrefix: t.subjectPrefix,
      stream: t.stream,
      name: 'license-test-product-publisher',
      log: createLogger('license-test-product-publisher', 'silent'),
    });
    const data = {
      id: updated.id,
      name: updated.name,
      description: updated.description,
      created_at: updated.created_at,
      archived_at: updated.archived_at || null,
    };
    await productBus.publish(newEvent('product.updated', updated.account_id, { product: data }, clock.now()));
    return updated;
  };
  return {
    t,
    clock,
    address: `127.0.0.1:${service.port}`,
    api: client.call,
    webApi: web.call,
    products,
    product(accountId, policy = {}) {
      const p = Product.fromPartial({
        id: newId('prod'),
        account_id: accountId,
        name: 'Editor',
        created_at: clock.now().toISOString(),
        policy: { refund_action: 'revoke', max_activations: 10, ...policy },
        price: { amount: 4900, currency: 'EUR' },
        email_on_purchase: true,
      });
      known.set(p.id, p);
      return p;
    },
    updateProduct: (product, policy) =>
      changeProduct(Product.fromPartial({ ...product, policy: { ...product.policy, ...policy } })),
    setArchived: (product, archived) =>
      changeProduct(Product.fromPartial({ ...product, archived_at: archived ? clock.now().toISOString() : undefined })),
    async extraInstance() {
      extra.push(await start({ env, clock }));
    },
    async issue(accountId, productId, email) {
      const req = CreateLicenseRequest.fromPartial({
        account_id: accountId,
        product_id: productId,
        customer_email: email,
      });
      return (await client.call.createLicense(req)).key;
    },
    holdProducts: () => gate.hold(),
    async activate(accountId, key, fingerprint) {
      return (await client.call.activate({ account_id: accountId, key, fingerprint, name: '' })).activation!.id;
    },
    async db() {
      const conn = await connectMongo(t.mongoUrl, `${t.dbPrefix}_license`);
      opened.push(conn);
      return conn;
    },
    async stop() {
      client.close();
      web.close();
      await Promise.all(opened.map((c) => c.close()));
      await Promise.all(extra.map((s) => s.stop()));
      await productBus?.close();
      await stopWithin('the licence service', service.stop());
      await dropDatabaseOf(t.mongoUrl, `${t.dbPrefix}_license`);
      await products.stop();
      await webhooks.stop();
    },
  };
}

/**
 * The licence service for a test file, and a reader of its event stream from the start: started before
 * the file's tests (`ready` then gets both, for the file's own set-up), stopped after them.
 */
export function useLicenseService(ready: (svc: RunningLicense, events: EventLog) => void | Promise<void>): void {
  let svc: RunningLicense | undefined;
  let events: EventLog | undefined;
  beforeAll(async () => {
    svc = await startLicense();
    events = await EventLog.open(svc.t.natsUrl, svc.t.stream);
    await ready(svc, events);
  });
  afterAll(async () => {
    await events?.close();
    await svc?.stop();
  });
}
