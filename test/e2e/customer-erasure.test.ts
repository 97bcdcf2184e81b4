import { CheckoutServiceClient, LicenseServiceClient, WebhookServiceClient } from '@licensing/proto';
import { connectMongo, createClient } from '@licensing/runtime';
import { credentialOf } from '../../scripts/lib/topology';
import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { machineVendor } from '../support/machine-vendor';
import { startStack, type Stack } from '../support/stack';
import { WebhookReceiver } from '../support/webhook-receiver';

// DELETE /api/v1/customers/{email} as the gateway carries it out: EraseCustomer on the licence,
// checkout and webhook services over gRPC, against real FerretDB and NATS. The e-mail leaves every
// collection of those services, the keys keep validating, and the events say so without the e-mail.
// Real time (no clock moved): the outbox clears published events from their documents after a few seconds.

let stack: Stack;
let events: EventLog;
let receiver: WebhookReceiver;
let grpc: {
  licenses: ReturnType<typeof createClient<LicenseServiceClient>>;
  checkout: ReturnType<typeof createClient<CheckoutServiceClient>>;
  webhooks: ReturnType<typeof createClient<WebhookServiceClient>>;
};

beforeAll(async () => {
  stack = await startStack();
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
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
  await receiver?.stop();
  await stack?.stop();
});

const vendor = (policy: Record<string, unknown> = {}) => machineVendor(stack, grpc.licenses, policy);

describe('erasing a customer', () => {
  it('leaves no trace of the e-mail in licences, activations, sessions and deliveries; the key validates; events say so; a repeat changes nothing', async () => {
    const v = await vendor();
    const hook = await v.api('POST', '/api/v1/webhooks', { url: `${receiver.url}/erasure`, events: ['*'] });
    expect(hook.status).toBe(201);
    const key = await v.issue('Erin.Smith@Example.com');
    const keptKey = await v.issue('keep@example.com');
    await v.machine(key, 'erin-1', "erin.smith@example.com's MacBook");
    const session = await v.api('POST', '/api/v1/checkout', {
      product_id: v.product,
      success_url: 'https://vendor.example/thanks',
      customer_email: 'ERIN.SMITH@example.com',
    });
    expect(session.status).toBe(201);
    // license.created ×2, license.activated, checkout.created, each recorded as a delivery.
    await receiver.waitFor('/erasure', 4);

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
      expect(await everything()).toMatch(/erin\.smith@example\.com/i);
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
      await eventually(async () => expect(await everything()).not.toMatch(/erin\.smith@example\.com/i), {
        timeoutMs: 30_000,
      });
      expect(await everything()).toContain('erased-7f3a@erased.invalid');
      expect(await everything()).toContain("erased-7f3a@erased.invalid's MacBook");
      expect(await everything()).toContain('keep@example.com');

      const valid = await v.api('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=erin-1`);
      expect([valid.status, valid.body.valid]).toEqual([200, true]);
      expect((await v.api('GET', `/api/v1/licenses/${key}`)).body.customer_email).toBe('erased-7f3a@erased.invalid');
      expect((await v.api('GET', `/api/v1/licenses/${keptKey}`)).body.customer_email).toBe('keep@example.com');
      // The vendor's endpoint hears of it.
      const delivered = await receiver.waitFor('/erasure', 6);
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
});
