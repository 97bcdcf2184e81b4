import type { Connection } from 'mongoose';
import { connectMongo, FIRST_SCHEMA_VERSION, MIGRATIONS_COLLECTION } from '@licensing/runtime';
import { services } from '../../scripts/lib/components';
import { eventually } from '../support/eventually';
import { dashboardOwner } from '../support/fixture';
import { askForLink } from '../support/portal';
import { client } from '../support/stack';
import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';
import { WebClient } from '../support/web-client';
import { WebhookReceiver } from '../support/webhook-receiver';

// "Every stored document carries a schema version" (docs/operations.md "Upgrades"): after a
// run that writes through every path a service has (mongoose's documents, and the writes that skip its
// defaults: lean insertMany of imported licences, machines and webhook deliveries, the driver's insert
// of file pieces, upserts and bulk writes of counts), no document of any collection of any service's
// database lacks `schema_version`. A write added without it makes this fail, naming the collection.

jest.setTimeout(180_000);

let stack: OpenSharedStack;
let receiver: WebhookReceiver;
const dbs: Record<string, Connection> = {};

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await openSharedStack();
  for (const s of services)
    dbs[s.name] = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_${s.name}`);
});

afterAll(async () => {
  for (const db of Object.values(dbs)) await db.close();
  await stack?.close();
  await receiver?.stop();
});

const until = <T>(fn: () => Promise<T>) => eventually(fn, { timeoutMs: 30_000, intervalMs: 100 });

it('after an import, a batch, a reroll, a webhook delivery, a checkout, a subscription, mail and an export, every document has schema_version', async () => {
  // An account signed up on the dashboard (accounts, users, sessions, sign-ups, API keys), and one to work in.
  await dashboardOwner(stack, 'versions');
  const { accountId, apiKey } = await stack.newAccount();
  const api = client(stack.url, apiKey);
  const hook = await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/versions`, events: ['*'] });
  expect(hook.status).toBe(201);
  const product = (
    await api('POST', '/api/v1/products', {
      name: 'Versioned',
      price: { amount: 900, currency: 'eur' },
      policy: { max_activations: 3 },
    })
  ).body.id as string;

  // Licences: issued (idempotently), activated, validated with a machine, a licence file, rerolled.
  const issued = await api(
    'POST',
    '/api/v1/licenses',
    { product_id: product, customer_email: 'versions@example.com', send_email: true },
    { 'idempotency-key': 'versions-1' },
  );
  expect(issued.status).toBe(201);
  const key = issued.body.license_key as string;
  expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'machine-1' })).status).toBe(201);
  expect((await api('POST', '/api/v1/keys/validate', { key, fingerprint: 'machine-1' })).body.valid).toBe(true);
  expect((await api('POST', `/api/v1/licenses/${key}/file`, {})).status).toBe(201);
  expect((await api('POST', `/api/v1/licenses/${key}/reroll`, { grace_hours: 1 })).status).toBe(200);

  // An import with machines (lean inserts), and a batch.
  const imported = await api(
    'POST',
    '/api/v1/imports?format=jsonl',
    `${JSON.stringify({ key: 'versions-import-0001', product_id: product, customer_email: 'imp@example.com', activations: ['m-1', 'm-2'] })}\n`,
    { 'content-type': 'application/x-ndjson' },
  );
  expect(imported.status).toBe(202);
  await until(async () => {
    expect((await api('GET', `/api/v1/imports/${imported.body.id}`)).body).toMatchObject({
      status: 'done',
      imported: 1,
    });
  });
  const batch = await api('POST', '/api/v1/licenses/batch', {
    product_id: product,
    licenses: [{ customer_email: 'b1@example.com' }, { customer_email: 'b2@example.com' }],
  });
  expect(batch.status).toBe(202);
  await until(async () => {
    expect((await api('GET', `/api/v1/licenses/batch/${batch.body.id}`)).body.status).toBe('done');
  });

  // A purchase on the hosted page (session, payment, licence, purchase mail) and a subscription renewed.
  const buy = async (productId: string, email: string) => {
    const session = (
      await api('POST', '/api/v1/checkout', { product_id: productId, success_url: 'https://vendor.example/thanks' })
    ).body;
    const web = new WebClient(stack.url, stack.topology);
    const page = await web.get(`/checkout/${session.id}`);
    await web.post(`/checkout/${session.id}/pay`, {
      _csrf: WebClient.csrf(page.html),
      email,
      card: '4242424242424242',
    });
    return until(async () => {
      const s = (await api('GET', `/api/v1/checkout/${session.id}`)).body;
      expect(s.status).toBe('complete');
      return s;
    });
  };
  await buy(product, 'buyer@example.com');
  const monthly = (
    await api('POST', '/api/v1/products', {
      name: 'Versioned monthly',
      price: { amount: 500, currency: 'eur', interval: 'month' },
    })
  ).body.id as string;
  const subscriptionId = (await buy(monthly, 'subscriber@example.com')).subscription_id as string;
  const sub = (await api('GET', `/api/v1/subscriptions/${subscriptionId}`)).body;
  const renewed = await api('POST', `/api/v1/subscriptions/${subscriptionId}/test_clock`, {
    advance_to: new Date(Date.parse(sub.current_period_end) + 60_000).toISOString(),
  });
  expect(renewed.status).toBe(200);
  expect((await api('POST', `/api/v1/subscriptions/${subscriptionId}/billing_portal`)).status).toBe(200);

  // A portal sign-in link asked for, a customer erased, a webhook secret rotated.
  await askForLink(new WebClient(stack.url), accountId, 'buyer@example.com');
  expect((await api('DELETE', '/api/v1/customers/b2@example.com')).status).toBe(200);
  expect((await api('POST', `/api/v1/webhooks/${hook.body.id}/rotate-secret`)).status).toBe(200);

  // Mail sent, webhooks delivered, counts flushed, an export written.
  await until(async () => {
    const mails = (await api('GET', '/api/v1/emails?limit=100')).body.data as { status: string }[];
    expect(mails.filter((m) => m.status === 'sent').length).toBeGreaterThanOrEqual(3);
  });
  await until(async () => {
    const log = (await api('GET', `/api/v1/webhooks/${hook.body.id}/deliveries?limit=100`)).body.data as {
      status: string;
    }[];
    expect(log.length).toBeGreaterThanOrEqual(5);
    expect(log.filter((d) => d.status === 'pending')).toEqual([]);
  });
  const exp = await api('POST', '/api/v1/exports');
  await until(async () => {
    expect((await api('GET', `/api/v1/exports/${exp.body.id}`)).body.status).toBe('done');
  });
  await until(async () => {
    expect(await dbs.license.collection('validation_stats').countDocuments({ account_id: accountId })).toBe(1);
  });

  // Every collection of every service's database: what the run wrote, and none without its version.
  const written: string[] = [];
  const unversioned: Record<string, number> = {};
  for (const s of services) {
    const db = dbs[s.name];
    for (const c of await db.db!.listCollections({}, { nameOnly: true }).toArray()) {
      if (c.name === MIGRATIONS_COLLECTION || c.name.startsWith('system.')) continue;
      const coll = db.collection(c.name);
      if ((await coll.countDocuments({})) > 0) written.push(`${s.name}.${c.name}`);
      const missing = await coll.countDocuments({ schema_version: { $exists: false } });
      if (missing) unversioned[`${s.name}.${c.name}`] = missing;
      const wrong = await coll.countDocuments({ schema_version: { $exists: true, $ne: FIRST_SCHEMA_VERSION } });
      if (wrong) unversioned[`${s.name}.${c.name} (not version ${FIRST_SCHEMA_VERSION})`] = wrong;
    }
  }
  expect(unversioned).toEqual({});
  // The run reached the writes that skip mongoose's defaults (and the others).
  expect(written).toEqual(
    expect.arrayContaining([
      'account.accounts',
      'account.api_keys',
      'product.products',
      'product.signing_keys',
      'license.licenses',
      'license.activations',
      'license.retired_keys',
      'license.license_batches',
      'license.imports',
      'license.import_events',
      'license.exports',
      'license.export_chunks',
      'license.idempotency_keys',
      'license.machine_sightings',
      'license.validation_stats',
      'license.customer_erasures',
      'checkout.checkout_sessions',
      'checkout.subscriptions',
      'checkout.subscription_invoices',
      'webhook.webhook_endpoints',
      'webhook.webhook_deliveries',
      'notification.emails',
      'notification.portal_links',
    ]),
  );
});
