import { CheckoutServiceClient, LicenseServiceClient, WebhookServiceClient } from '@licensing/proto';
import { connectMongo, createClient } from '@licensing/runtime';
import { credentialOf } from '../../scripts/lib/topology';
import { connect, type NatsConnection } from 'nats';
import { EventLog, consumerDrained } from '../support/events';
import { eventually } from '../support/eventually';
import { machineVendor } from '../support/machine-vendor';
import { SmtpInbox } from '../support/smtp-inbox';
import { startStack, type Stack } from '../support/stack';
import { WebClient } from '../support/web-client';
import { WebhookReceiver } from '../support/webhook-receiver';

// DELETE /api/v1/customers/{email} as the gateway carries it out: EraseCustomer on the licence,
// checkout and webhook services over gRPC, against real FerretDB and NATS. The e-mail leaves every
// collection of those services, the keys keep validating, and the events say so without the e-mail.
// Real time (no clock moved): the outbox clears published events from their documents after a few seconds.
// Then the places a customer's e-mail lives besides those (subscriptions, licence batches' items), and
// the mail that events read after the erasure would have sent to it: none goes out.

let stack: Stack;
let events: EventLog;
let receiver: WebhookReceiver;
let inbox: SmtpInbox;
let nc: NatsConnection;
let grpc: {
  licenses: ReturnType<typeof createClient<LicenseServiceClient>>;
  checkout: ReturnType<typeof createClient<CheckoutServiceClient>>;
  webhooks: ReturnType<typeof createClient<WebhookServiceClient>>;
};

beforeAll(async () => {
  inbox = await SmtpInbox.start();
  stack = await startStack({ customerMailUrl: inbox.url, mailSendIntervalMs: 100 });
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  nc = await connect({ servers: stack.topology.natsUrl });
  receiver = await WebhookReceiver.start();
  const asGateway = credentialOf(stack.topology, 'gateway');
  grpc = {
    licenses: createClient(LicenseServiceClient, stack.addrs.license, asGateway),
    checkout: createClient(CheckoutServiceClient, stack.addrs.checkout, asGateway),
    webhooks: createClient(WebhookServiceClient, stack.addrs.webhook, asGateway),
  };
});

afterAll(async () => {
  for (const c of Object.values(grpc ?? {})) c.close();
  await events?.close();
  await nc?.close();
  await receiver?.stop();
  await stack?.stop();
  await inbox?.stop();
});

const vendor = (policy: Record<string, unknown> = {}) => machineVendor(stack, grpc.licenses, policy);

describe('erasing a customer', () => {
  it('leaves no trace of the e-mail in licences, activations, sessions and deliveries; the key validates; events say so; a repeat changes nothing', async () => {
    const v = await vendor();
    const hook = await v.api('POST', '/api/v1/webhooks', { url: `${receiver.url}/erasure`, events: ['*'] });
    expect(hook.status).toBe(201);
    const key = await v.issue('Erin.Smith@Example.com');
    const keptKey = await v.issue('keep@example.com');
    // Other customers whose addresses hold the erased one: theirs stay whole, in licences and deliveries.
    const longer = ['xerin.smith@example.com', 'erin.smith@example.com.au'];
    for (const email of longer) await v.issue(email);
    await v.machine(key, 'erin-1', "erin.smith@example.com's MacBook");
    const session = await v.api('POST', '/api/v1/checkout', {
      product_id: v.product,
      success_url: 'https://vendor.example/thanks',
      customer_email: 'ERIN.SMITH@example.com',
    });
    expect(session.status).toBe(201);
    // license.created ×4, license.activated, checkout.created, each recorded as a delivery.
    await receiver.waitFor('/erasure', 6);

    const db = (service: string) => connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_${service}`);
    const [licenseDb, checkoutDb, webhookDb] = await Promise.all([db('license'), db('checkout'), db('webhook')]);
    const everything = async () =>
      JSON.stringify([
        await licenseDb.collection('licenses').find({ account_id: v.accountId }).toArray(),
        await licenseDb.collection('activations').find({ account_id: v.accountId }).toArray(),
        await licenseDb.collection('customer_erasures').find({ account_id: v.accountId }).toArray(),
        await checkoutDb.collection('checkout_sessions').find({ account_id: v.accountId }).toArray(),
        await webhookDb.collection('webhook_deliveries').find({ account_id: v.accountId }).toArray(),
      ]);
    try {
      // The address itself, not inside the longer ones.
      const erinAsAWhole = /(?<![\w.+-])erin\.smith@example\.com(?![\w-]|\.\w)/i;
      expect(await everything()).toMatch(erinAsAWhole);
      const req = {
        account_id: v.accountId,
        email: 'erin.smith@EXAMPLE.com',
        placeholder: 'erased-7f3a@erased.invalid',
      };
      expect(await grpc.licenses.call.eraseCustomer(req)).toEqual({ erased: 1 });
      expect(await grpc.checkout.call.eraseCustomer(req)).toEqual({ erased: 1 });
      expect((await grpc.webhooks.call.eraseCustomer(req)).erased).toBeGreaterThanOrEqual(3);

      await events.waitFor(
        (e) =>
          e.type === 'license.updated' &&
          (e.data as { license: { key: string; customer_email: string } }).license.key === key &&
          (e.data as { license: { customer_email: string } }).license.customer_email === 'erased-7f3a@erased.invalid',
      );
      const erased = await events.waitFor((e) => e.type === 'customer.erased' && e.account_id === v.accountId);
      expect(erased.data).toEqual({ placeholder: 'erased-7f3a@erased.invalid', licenses: 1 });
      expect(JSON.stringify(erased)).not.toMatch(/erin/i);

      // The outbox keeps a published event on its document a few seconds before clearing it.
      await eventually(async () => expect(await everything()).not.toMatch(erinAsAWhole), {
        timeoutMs: 30_000,
      });
      expect(await everything()).toContain('erased-7f3a@erased.invalid');
      expect(await everything()).toContain("erased-7f3a@erased.invalid's MacBook");
      expect(await everything()).toContain('keep@example.com');
      const stored = await webhookDb.collection('webhook_deliveries').find({ account_id: v.accountId }).toArray();
      const customers = stored.map(
        (d) => (JSON.parse(d.body) as { data: { license?: { customer_email: string } } }).data.license?.customer_email,
      );
      expect(customers).toEqual(expect.arrayContaining(longer));

      const valid = await v.api('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=erin-1`);
      expect([valid.status, valid.body.valid]).toEqual([200, true]);
      expect((await v.api('GET', `/api/v1/licenses/${key}`)).body.customer_email).toBe('erased-7f3a@erased.invalid');
      expect((await v.api('GET', `/api/v1/licenses/${keptKey}`)).body.customer_email).toBe('keep@example.com');
      // The vendor's endpoint hears of it.
      const delivered = await receiver.waitFor('/erasure', 8);
      expect(delivered.some((r) => JSON.parse(r.body).type === 'customer.erased')).toBe(true);

      const snapshot = await everything();
      expect(await grpc.licenses.call.eraseCustomer(req)).toEqual({ erased: 0 });
      expect(await grpc.checkout.call.eraseCustomer(req)).toEqual({ erased: 0 });
      expect(await grpc.webhooks.call.eraseCustomer(req)).toEqual({ erased: 0 });
      await events.waitFor(
        (e) =>
          e.type === 'customer.erased' &&
          e.account_id === v.accountId &&
          (e.data as { licenses: number }).licenses === 0,
      );
      // Nothing changed but the second call's own erasure record and its customer.erased delivery.
      const strip = (s: string) => {
        const [licenses, activations, , sessions, deliveries] = JSON.parse(s) as { event_type?: string }[][];
        return [licenses, activations, sessions, deliveries.filter((d) => d.event_type !== 'customer.erased')];
      };
      await eventually(async () => expect(strip(await everything())).toEqual(strip(snapshot)), { timeoutMs: 30_000 });
    } finally {
      await Promise.all([licenseDb.close(), checkoutDb.close(), webhookDb.close()]);
    }
  }, 120_000);

  it("takes the e-mail off subscriptions and licence batches' items; events read after it send the erased customer nothing", async () => {
    const v = await vendor();
    const monthly = await v.api('POST', '/api/v1/products', {
      name: 'Editor Monthly',
      price: { amount: 900, currency: 'EUR', interval: 'month' },
    });
    expect(monthly.status).toBe(201);
    const customer = 'Late.Buyer@Example.com';
    // The notification service is away: the events asking for mail wait in the stream, read after the erasure.
    await stack.stopService('notification');
    let notificationUp = false;
    const checkoutDb = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
    const licenseDb = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_license`);
    const notificationDb = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_notification`);
    try {
      // A subscription bought on the hosted test-mode page: its checkout.completed asks for the purchase e-mail.
      const created = await v.api('POST', '/api/v1/checkout', {
        product_id: monthly.body.id,
        success_url: 'https://vendor.example/thanks',
      });
      expect(created.status).toBe(201);
      const web = new WebClient(stack.url, stack.topology);
      const page = await web.get(new URL(created.body.url).pathname);
      const paid = await web.post(`/checkout/${created.body.id}/pay`, {
        _csrf: WebClient.csrf(page.html),
        email: customer,
        card: '4242424242424242',
      });
      expect(paid.status).toBe(303);
      const bySubscriber = async () =>
        (await v.api('GET', `/api/v1/subscriptions?customer_email=${encodeURIComponent(customer.toLowerCase())}`)).body
          .data as { id: string; customer_email: string }[];
      await eventually(async () => expect(await bySubscriber()).toHaveLength(1), { timeoutMs: 15_000 });
      // A batch whose items ask for the licence mail: its license.batch_completed makes the notification read it.
      const batch = await v.api('POST', '/api/v1/licenses/batch', {
        product_id: v.product,
        licenses: [
          { customer_email: customer, send_email: true },
          { customer_email: 'batch.neighbour@example.com', send_email: true },
        ],
      });
      expect(batch.status).toBe(202);
      await eventually(
        async () => expect((await v.api('GET', `/api/v1/licenses/batch/${batch.body.id}`)).body.status).toBe('done'),
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      const stored = async () =>
        JSON.stringify([
          await checkoutDb.collection('subscriptions').find({ account_id: v.accountId }).toArray(),
          await licenseDb.collection('license_batches').find({ account_id: v.accountId }).toArray(),
        ]);
      expect(await stored()).toMatch(/late\.buyer@example\.com/i);

      const req = { account_id: v.accountId, email: customer, placeholder: 'erased-5e1f@erased.invalid' };
      // The licences (the subscription's and the batch's) and the batch; the session and the subscription.
      expect(await grpc.licenses.call.eraseCustomer(req)).toEqual({ erased: 3 });
      expect(await grpc.checkout.call.eraseCustomer(req)).toEqual({ erased: 2 });
      expect(await bySubscriber()).toEqual([]);
      const [subscription] = (await v.api('GET', '/api/v1/subscriptions')).body.data as { customer_email: string }[];
      expect(subscription.customer_email).toBe('erased-5e1f@erased.invalid');
      // The outbox keeps a published event on its document a few seconds before clearing it.
      await eventually(async () => expect(await stored()).not.toMatch(/late\.buyer@example\.com/i), {
        timeoutMs: 30_000,
      });
      expect(await stored()).toContain('batch.neighbour@example.com');
      expect(await grpc.licenses.call.eraseCustomer(req)).toEqual({ erased: 0 });
      expect(await grpc.checkout.call.eraseCustomer(req)).toEqual({ erased: 0 });

      // The notification service is back and reads the events from before the erasure.
      await stack.restartService('notification');
      notificationUp = true;
      await inbox.mailTo('batch.neighbour@example.com');
      for (const consumer of ['notification-mail', 'notification-batch-mail'])
        await consumerDrained(nc, stack.topology.stream, consumer);
      // The purchase e-mail that checkout.completed asked for (with the old address) fails unsent, logged
      // under the placeholder; the batch's item names the placeholder, so none is queued for it.
      await eventually(
        async () => {
          const log = (await v.api('GET', '/api/v1/emails?limit=100')).body.data as Record<string, unknown>[];
          expect(log.map((m) => [m.to, m.template, m.status, m.last_error]).sort()).toEqual([
            ['batch.neighbour@example.com', 'purchase', 'sent', null],
            ['erased-5e1f@erased.invalid', 'purchase', 'failed', 'the customer was erased'],
          ]);
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      expect(inbox.received.filter((m) => m.to.some((to) => /late\.buyer|erased\.invalid/i.test(to)))).toEqual([]);
      expect(
        JSON.stringify(await notificationDb.collection('emails').find({ account_id: v.accountId }).toArray()),
      ).not.toMatch(/late\.buyer/i);
    } finally {
      if (!notificationUp) await stack.restartService('notification');
      await Promise.all([checkoutDb.close(), licenseDb.close(), notificationDb.close()]);
    }
  }, 120_000);
});
