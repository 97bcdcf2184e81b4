import { connectMongo } from '@licensing/runtime';
import { KEYED_POSTS } from '../../gateway/src/request-shapes/idempotent-posts';
import { eventually } from '../support/eventually';
import { client, startStack, type Stack } from '../support/stack';
import { WebClient } from '../support/web-client';
import { WebhookReceiver } from '../support/webhook-receiver';

// Idempotency-Key on the POSTs that create or send something, through the running system: each route
// sent twice with one key has one effect, and the second answer is the first one again
// (Idempotent-Replayed); the same key with another request is 422; a key that failed is free again.

let stack: Stack;
let receiver: WebhookReceiver;
let api: ReturnType<typeof client>;
let product: string;
let accountId: string;

beforeAll(async () => {
  stack = await startStack();
  receiver = await WebhookReceiver.start();
  const account = await stack.newAccount();
  accountId = account.accountId;
  api = client(stack.url, account.apiKey);
  product = (await api('POST', '/api/v1/products', { name: 'Keyed', policy: { duration_days: 30 } })).body.id;
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

const issue = async (over: Record<string, unknown> = {}) =>
  (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'keyed@example.com', ...over })).body
    .license_key as string;
let n = 0;
const freshKey = () => `idem-${Date.now()}-${n++}`;

/** Each route: the request (made ready by `setUp`), and how many effects it left (one after two sends). */
interface Case {
  route: (typeof KEYED_POSTS)[number];
  setUp: () => Promise<{
    path: string;
    body?: unknown;
    headers?: Record<string, string>;
    effects: (answer: Record<string, any>) => Promise<number>;
  }>;
}

const hook = async (path: string, events = ['*']) =>
  (await api('POST', '/api/v1/webhooks', { url: `${receiver.url}${path}`, events })).body.id as string;

/** A monthly subscription bought on the hosted checkout page (test mode): its id. */
async function subscribe(): Promise<string> {
  const monthly = (
    await api('POST', '/api/v1/products', {
      name: `Monthly ${freshKey()}`,
      price: { amount: 1000, currency: 'EUR', interval: 'month' },
    })
  ).body.id;
  const created = await api('POST', '/api/v1/checkout', {
    product_id: monthly,
    success_url: 'https://vendor.example/thanks',
  });
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(new URL(created.body.url).pathname);
  const paid = await web.post(`/checkout/${created.body.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email: 'subscriber@example.com',
    card: '4242 4242 4242 4242',
  });
  expect(paid.status).toBe(303);
  return (await api('GET', `/api/v1/checkout/${created.body.id}`)).body.subscription_id;
}

const cases: Case[] = [
  {
    route: '/webhooks',
    setUp: async () => {
      const url = `${receiver.url}/created-${freshKey()}`;
      return {
        path: '/api/v1/webhooks',
        body: { url, events: ['*'] },
        effects: async () =>
          ((await api('GET', '/api/v1/webhooks?limit=100')).body.data as { url: string }[]).filter((e) => e.url === url)
            .length,
      };
    },
  },
  {
    route: '/webhooks/:id/rotate-secret',
    setUp: async () => {
      const path = `/rotated-${freshKey()}`;
      const id = await hook(path);
      return {
        path: `/api/v1/webhooks/${id}/rotate-secret`,
        // Each rotation adds a live secret, and a delivery is signed by each: one rotation, two signatures.
        effects: async () => {
          await api('POST', `/api/v1/webhooks/${id}/test`);
          const [sent] = await receiver.waitFor(path, 1);
          return String(sent.headers['webhook-signature']).split(' ').length - 1;
        },
      };
    },
  },
  {
    route: '/webhooks/:id/deliveries/:delivery/retry',
    setUp: async () => {
      const path = `/failing-${freshKey()}`;
      // Four failed attempts end the delivery failed; the next one (the retry) succeeds.
      receiver.answer(path, 500, 500, 500, 500, 200);
      const id = await hook(path);
      await api('POST', `/api/v1/webhooks/${id}/test`);
      await receiver.waitFor(path, 4);
      const failed = await eventually(async () => {
        const latest = (await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data[0];
        expect(latest).toMatchObject({ status: 'failed', attempts: 4 });
        return latest.id as string;
      });
      return {
        path: `/api/v1/webhooks/${id}/deliveries/${failed}/retry`,
        // Attempts made after the four that failed: once delivered, nothing else is sent.
        effects: async () => {
          await eventually(async () =>
            expect((await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data[0].status).toBe('delivered'),
          );
          return receiver.received.filter((r) => r.path === path).length - 4;
        },
      };
    },
  },
  {
    route: '/subscriptions/:id/cancel',
    setUp: async () => {
      const id = await subscribe();
      return {
        path: `/api/v1/subscriptions/${id}/cancel`,
        body: { at_period_end: true },
        // A second cancellation is refused (409): one is all there is.
        effects: async () => ((await api('GET', `/api/v1/subscriptions/${id}`)).body.cancel_at_period_end ? 1 : 0),
      };
    },
  },
  {
    route: '/products',
    setUp: async () => {
      const name = `Once ${freshKey()}`;
      return {
        path: '/api/v1/products',
        body: { name },
        effects: async () =>
          ((await api('GET', '/api/v1/products?limit=100')).body.data as { name: string }[]).filter(
            (p) => p.name === name,
          ).length,
      };
    },
  },
  {
    route: '/products/:id/signing-keys/rotate',
    setUp: async () => {
      const id = (await api('POST', '/api/v1/products', { name: `Rotated ${freshKey()}` })).body.id;
      const before = (await api('GET', `/api/v1/products/${id}/signing-keys`)).body.data.length as number;
      return {
        path: `/api/v1/products/${id}/signing-keys/rotate`,
        effects: async () => (await api('GET', `/api/v1/products/${id}/signing-keys`)).body.data.length - before,
      };
    },
  },
  {
    route: '/webhooks/:id/test',
    setUp: async () => {
      const id = await hook(`/hook-${freshKey()}`);
      return {
        path: `/api/v1/webhooks/${id}/test`,
        effects: async () => (await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data.length,
      };
    },
  },
  ...(['suspend', 'revoke'] as const).map(
    (action): Case => ({
      route: `/licenses/:key/${action}`,
      setUp: async () => {
        const key = await issue();
        return {
          path: `/api/v1/licenses/${key}/${action}`,
          // A second transition would be refused (409): one is all there is.
          effects: async () => ((await api('GET', `/api/v1/licenses/${key}`)).body.status === 'active' ? 0 : 1),
        };
      },
    }),
  ),
  {
    route: '/licenses/:key/reinstate',
    setUp: async () => {
      const key = await issue();
      await api('POST', `/api/v1/licenses/${key}/suspend`);
      return {
        path: `/api/v1/licenses/${key}/reinstate`,
        effects: async () => ((await api('GET', `/api/v1/licenses/${key}`)).body.status === 'active' ? 1 : 0),
      };
    },
  },
  {
    route: '/licenses/:key/renew',
    setUp: async () => {
      const key = await issue();
      const before = Date.parse((await api('GET', `/api/v1/licenses/${key}`)).body.expires_at);
      const DAYS_30 = 30 * 86_400_000;
      return {
        path: `/api/v1/licenses/${key}/renew`,
        // Each renewal adds the policy's 30 days.
        effects: async () =>
          Math.round((Date.parse((await api('GET', `/api/v1/licenses/${key}`)).body.expires_at) - before) / DAYS_30),
      };
    },
  },
  {
    route: '/licenses/:key/reroll',
    setUp: async () => {
      const key = await issue();
      const id = (await api('GET', `/api/v1/licenses/${key}`)).body.id;
      return {
        path: `/api/v1/licenses/${key}/reroll`,
        body: { grace_hours: 1 },
        // One new key: the licence holds the key the first answer gave (a second reroll would replace it).
        effects: async (answer) => {
          const now = (await api('GET', `/api/v1/licenses/${answer.key}`)).body;
          return now.id === id && now.key === answer.key && answer.key !== key ? 1 : 0;
        },
      };
    },
  },
  {
    route: '/licenses/:key/email',
    setUp: async () => {
      const email = `mailed-${freshKey()}@example.com`;
      const key = await issue({ customer_email: email });
      return {
        path: `/api/v1/licenses/${key}/email`,
        effects: async () =>
          ((await api('GET', `/api/v1/emails?limit=100`)).body.data as { to: string }[]).filter((e) => e.to === email)
            .length,
      };
    },
  },
  {
    route: '/licenses/:key/seat-rescue',
    setUp: async () => {
      const key = await issue({ customer_email: `rescued-${freshKey()}@example.com` });
      // A second rescue within the hour is refused (429): a replay is not a second one.
      return { path: `/api/v1/licenses/${key}/seat-rescue`, effects: async () => 1 };
    },
  },
  {
    route: '/checkout/:id/expire',
    setUp: async () => {
      const priced = (
        await api('POST', '/api/v1/products', {
          name: `Sold ${freshKey()}`,
          price: { amount: 1000, currency: 'usd' },
        })
      ).body.id;
      const session = await api('POST', '/api/v1/checkout', {
        product_id: priced,
        success_url: 'https://vendor.example/thanks',
      });
      const id = session.body.id;
      return {
        path: `/api/v1/checkout/${id}/expire`,
        effects: async () => ((await api('GET', `/api/v1/checkout/${id}`)).body.status === 'expired' ? 1 : 0),
      };
    },
  },
  {
    route: '/exports',
    setUp: async () => ({ path: '/api/v1/exports', effects: async () => exportsStarted.size }),
  },
  {
    route: '/imports',
    setUp: async () => {
      const key = `imported-${freshKey()}-0123456789abcdef`;
      return {
        path: '/api/v1/imports?format=jsonl',
        body: `${JSON.stringify({ key, product_id: product, customer_email: 'imported@example.com' })}\n`,
        headers: { 'content-type': 'application/x-ndjson' },
        effects: async () => importsStarted.size,
      };
    },
  },
];

const exportsStarted = new Set<string>();
const importsStarted = new Set<string>();

it('covers every route that keeps its key in the account service', () => {
  expect(cases.map((c) => c.route).sort()).toEqual([...KEYED_POSTS].sort());
});

it.each(cases.map((c) => [c.route, c] as const))(
  '%s: sent twice with one key, one effect and one answer',
  async (_route, c) => {
    const { path, body, headers = {}, effects } = await c.setUp();
    const key = freshKey();
    const first = await api('POST', path, body, { ...headers, 'idempotency-key': key });
    expect(first.status).toBeLessThan(300);
    if (path.startsWith('/api/v1/exports')) exportsStarted.add(first.body.id);
    if (path.startsWith('/api/v1/imports')) importsStarted.add(first.body.id);
    const again = await api('POST', path, body, { ...headers, 'idempotency-key': key });
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([first.status, 'true']);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    if (path.startsWith('/api/v1/exports')) exportsStarted.add(again.body.id);
    if (path.startsWith('/api/v1/imports')) importsStarted.add(again.body.id);
    expect(await effects(first.body)).toBe(1);
    if (path.startsWith('/api/v1/exports')) exportsStarted.clear();
    if (path.startsWith('/api/v1/imports')) importsStarted.clear();
  },
);

it('the same key with another request is 422; a request that failed frees its key', async () => {
  const key = freshKey();
  expect((await api('POST', '/api/v1/products', { name: 'First body' }, { 'idempotency-key': key })).status).toBe(201);
  const other = await api('POST', '/api/v1/products', { name: 'Other body' }, { 'idempotency-key': key });
  expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
  const elsewhere = await api('POST', '/api/v1/exports', undefined, { 'idempotency-key': key });
  expect([elsewhere.status, elsewhere.body.code]).toEqual([422, 'idempotency_key_reused']);

  const failing = freshKey();
  const refused = await api('POST', '/api/v1/products', { name: '' }, { 'idempotency-key': failing });
  expect(refused.status).toBe(400);
  const retried = await api('POST', '/api/v1/products', { name: 'Fixed' }, { 'idempotency-key': failing });
  expect(retried.status).toBe(201);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
});

it('an answer holding a signing secret is stored sealed, and replays only to the API key that sent it', async () => {
  const key = freshKey();
  const body = { url: `${receiver.url}/sealed-${freshKey()}`, events: ['*'] };
  const first = await api('POST', '/api/v1/webhooks', body, { 'idempotency-key': key });
  expect(first.status).toBe(201);
  const secret = first.body.secret as string;
  expect(secret).toBeTruthy();
  const again = await api('POST', '/api/v1/webhooks', body, { 'idempotency-key': key });
  expect([again.headers.get('idempotent-replayed'), again.body.secret]).toEqual(['true', secret]);

  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_account`);
  try {
    const stored = await eventually(async () => {
      const docs = await db
        .collection('request_keys')
        .find({ body_json: { $exists: true } })
        .toArray();
      const answers = docs.map((d) => String(d.body_json)).filter((b) => !b.startsWith('{'));
      expect(answers.length).toBeGreaterThan(0);
      return docs.map((d) => JSON.stringify(d)).join('\n');
    });
    expect(stored).not.toContain(secret);
  } finally {
    await db.close();
  }

  const other = await stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: 'second' });
  const asOther = await client(stack.url, other.secret)('POST', '/api/v1/webhooks', body, { 'idempotency-key': key });
  expect([asOther.status, asOther.body.code]).toEqual([422, 'idempotency_key_reused']);
  expect(JSON.stringify(asOther.body)).not.toContain(secret);
});
