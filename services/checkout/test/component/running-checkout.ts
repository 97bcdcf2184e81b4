import {
  CheckoutPageServiceClient,
  CheckoutServiceClient,
  CreateCheckoutSessionRequest,
  type ApplySubscriptionRequest,
  generateLicenseKey,
  License,
  LicenseServiceService,
  Product,
  ProductServiceService,
  SubscriptionServiceClient,
  type LicensePolicy,
  type Price,
} from '@licensing/proto';
import { AppError, connectMongo, createClient, newId } from '@licensing/runtime';
import {
  AnswerGate,
  type FakeHandlers,
  type FakePeer,
  startFakePeer,
  dropDatabaseOf,
  stopWithin,
} from '@licensing/test-support';
import type { Connection } from 'mongoose';
import { start } from '../../src/main';
import { credentialOf, envFor, type Topology } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { freePort } from '../../../../scripts/lib/net';
import { EventLog } from '../../../../test/support/events';
import { TestClock, testTopology } from '../../../../test/support/stack';

// The checkout service alone, as its component tests run it: its own `start` over a test topology (real
// FerretDB and NATS, stripe-mock when a test gives stripeOverrides) with a clock the test moves, called
// over gRPC as the gateway and the web component call it. Its peers are faked: the product service by
// the products a test defines (another account's product is not found, as in the real one), the
// licence service by a store of the licences it issued that honours idempotency keys per account and
// caller as the real one does (services/license: createLicenseScope), so a repeated issuance of one
// session finds the same licence.

export const PUBLIC_BASE_URL = 'https://licensing.example';

export interface RunningCheckout {
  t: Topology;
  clock: TestClock;
  /** CheckoutService with the gateway's credential. */
  api: ReturnType<typeof createClient<CheckoutServiceClient>>['call'];
  /** SubscriptionService with the gateway's credential. */
  subs: ReturnType<typeof createClient<SubscriptionServiceClient>>['call'];
  /** CheckoutPageService with the web component's credential: the hosted page's calls. */
  pages: ReturnType<typeof createClient<CheckoutPageServiceClient>>['call'];
  products: FakePeer<typeof ProductServiceService>;
  licenses: FakePeer<typeof LicenseServiceService>;
  /** Every licence the fake licence service issued, in order. */
  issued: License[];
  /** The event stream of the topology, read from its start. */
  events: EventLog;
  /** The Stripe webhook receiver's URL (/webhooks/stripe). */
  webhookUrl: string;
  /** A product of `accountId` the fake product service answers with (a price unless `price` is null). */
  product(accountId: string, price?: Partial<Price> | null, policy?: Partial<LicensePolicy>): Product;
  /** A session request as the gateway sends it (every field present), with `over` on top. */
  sessionRequest(
    accountId: string,
    productId: string,
    over?: Partial<CreateCheckoutSessionRequest>,
  ): CreateCheckoutSessionRequest;
  /** A new session paid on the hosted page with `card` (as the web component pays it): the session then. */
  buy(
    accountId: string,
    productId: string,
    card: string,
    over?: Partial<CreateCheckoutSessionRequest>,
  ): Promise<Awaited<ReturnType<RunningCheckout['api']['getSession']>>>;
  /**
   * Gives the licence of `key` a new key, as a reroll does: the licence service still finds it by the
   * old one, and answers ApplySubscription with the new one. The new key.
   */
  reroll(key: string): string;
  /** The ApplySubscription requests the licence service received for `subscriptionId`, in order. */
  applied(subscriptionId: string): ApplySubscriptionRequest[];
  /**
   * Holds the licence service's CreateLicense answers back until the returned function is called (a
   * slow licence service): calls made meanwhile are answered then, as the real one would answer them.
   */
  holdLicences(): () => void;
  /** The service's database on a connection of the test's own (its look is no query shape of the service). */
  db(): Promise<Connection>;
  stop(): Promise<void>;
}

export interface CheckoutOptions {
  topology?: Partial<Topology>;
  /** Licence service methods on top of createLicense (ApplySubscription, TransitionLicense, …). */
  licenseHandlers?: FakeHandlers<typeof LicenseServiceService>;
}

/**
 * CreateLicense as the licence service answers it (one licence per account, caller and idempotency
 * key), TransitionLicense, and ApplySubscription: the licence found by its key or a key it had before a reroll, answered
 * with its expiry and its key now.
 */
function issuing(
  issued: License[],
  clock: TestClock,
  gate: AnswerGate,
  formerKeys: Map<string, License>,
): FakeHandlers<typeof LicenseServiceService> {
  const byKey = new Map<string, License>();
  return {
    // Revoke or suspend (a refund, a chargeback): 409 when the licence is already so, or revoked.
    transitionLicense: ({ account_id, key, action }) => {
      const found = issued.find((l) => l.key === key && l.account_id === account_id);
      if (!found) throw AppError.notFound('license');
      const to = action === 'revoke' ? 'revoked' : action === 'suspend' ? 'suspended' : 'active';
      if (found.status === to || found.status === 'revoked')
        throw new AppError('conflict', `the licence is already ${found.status}`);
      found.status = to;
      return found;
    },
    applySubscription: (req) => {
      const found = issued.find((l) => l.key === req.key && l.account_id === req.account_id) ?? formerKeys.get(req.key);
      if (!found) throw AppError.notFound('license');
      found.expires_at = req.expires_at;
      return found;
    },
    createLicense: async (req, { caller }) => {
      await gate.passed();
      const scope = `${req.account_id}:${caller}:${req.idempotency_key}`;
      const earlier = req.idempotency_key ? byKey.get(scope) : undefined;
      if (earlier) return earlier;
      const licence = License.fromPartial({
        id: newId('lic'),
        account_id: req.account_id,
        product_id: req.product_id,
        key: generateLicenseKey(),
        customer_email: req.customer_email,
        status: 'active',
        created_at: clock.now().toISOString(),
      });
      issued.push(licence);
      if (req.idempotency_key) byKey.set(scope, licence);
      return licence;
    },
  };
}

export async function startCheckout(opts: CheckoutOptions = {}): Promise<RunningCheckout> {
  const t = testTopology(opts.topology);
  const clock = new TestClock();
  const known = new Map<string, Product>();
  const issued: License[] = [];
  const gate = new AnswerGate();
  const formerKeys = new Map<string, License>();
  const products = await startFakePeer(ProductServiceService, {
    getProduct: ({ account_id, id }) => {
      const found = known.get(id);
      if (!found || found.account_id !== account_id) throw new AppError('not_found', `product ${id} not found`);
      return found;
    },
  });
  const licenses = await startFakePeer(LicenseServiceService, {
    ...issuing(issued, clock, gate, formerKeys),
    ...opts.licenseHandlers,
  });
  await setUpEvents(t);
  const httpPort = await freePort();
  const service = await start({
    env: envFor('checkout', t, {
      port: 0,
      httpPort,
      publicBaseUrl: PUBLIC_BASE_URL,
      addrs: { product: products.address, license: licenses.address },
    }),
    clock,
  });
  const address = `127.0.0.1:${service.port}`;
  const checkout = createClient(CheckoutServiceClient, address, credentialOf(t, 'gateway'));
  const subscriptions = createClient(SubscriptionServiceClient, address, credentialOf(t, 'gateway'));
  const pages = createClient(CheckoutPageServiceClient, address, credentialOf(t, 'web'));
  const events = await EventLog.open(t.natsUrl, t.stream);
  const opened: Connection[] = [];
  const sessionRequest: RunningCheckout['sessionRequest'] = (accountId, productId, over = {}) =>
    CreateCheckoutSessionRequest.fromPartial({
      account_id: accountId,
      product_id: productId,
      customer_email: '',
      success_url: 'https://vendor.example/thanks',
      cancel_url: '',
      metadata: {},
      expires_in_minutes: 0,
      idempotency_key: '',
      ...over,
    });
  return {
    t,
    clock,
    api: checkout.call,
    subs: subscriptions.call,
    pages: pages.call,
    products,
    licenses,
    issued,
    events,
    webhookUrl: `http://127.0.0.1:${httpPort}/webhooks/stripe`,
    product(accountId, price = {}, policy = {}) {
      const p = Product.fromPartial({
        id: newId('prod'),
        account_id: accountId,
        name: 'Editor',
        created_at: clock.now().toISOString(),
        policy: { refund_action: 'revoke', payment_grace_days: 7, ...policy },
        price: price === null ? undefined : { amount: 4900, currency: 'EUR', ...price },
        email_on_purchase: true,
      });
      known.set(p.id, p);
      return p;
    },
    sessionRequest,
    async buy(accountId, productId, card, over = {}) {
      const s = await checkout.call.createSession(sessionRequest(accountId, productId, over));
      const { form_token } = await pages.call.getPage({ session_id: s.id, receipt: '', issue_form_token: true });
      const paid = await pages.call.pay({
        session_id: s.id,
        form_token,
        receipt: '',
        email: 'subscriber@example.com',
        card,
      });
      if (paid.outcome !== 'paid') throw new Error(`the payment of ${s.id} was ${paid.outcome}: ${paid.message}`);
      return checkout.call.getSession({ account_id: accountId, id: s.id });
    },
    reroll(key) {
      const licence = issued.find((l) => l.key === key);
      if (!licence) throw new Error(`no licence ${key} was issued`);
      formerKeys.set(key, licence);
      licence.key = generateLicenseKey();
      return licence.key;
    },
    applied: (subscriptionId) =>
      licenses.requestsTo('applySubscription').filter((r) => r.subscription?.id === subscriptionId),
    holdLicences: () => gate.hold(),
    async db() {
      const conn = await connectMongo(t.mongoUrl, `${t.dbPrefix}_checkout`);
      opened.push(conn);
      return conn;
    },
    async stop() {
      checkout.close();
      subscriptions.close();
      pages.close();
      await events.close();
      await Promise.all(opened.map((c) => c.close()));
      await stopWithin('the checkout service', service.stop());
      await dropDatabaseOf(t.mongoUrl, `${t.dbPrefix}_checkout`);
      await products.stop();
      await licenses.stop();
    },
  };
}
