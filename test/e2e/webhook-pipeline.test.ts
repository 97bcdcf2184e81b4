import { client, startStack, type Stack } from '../support/stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';

// Events reach webhooks without waiting for the dispatcher's poll of the store: the
// fan-out hands each delivery it records straight to the dispatcher. Here the poll
// would first run in an hour, so whatever arrives came that way. The endpoint
// concurrency is the default one (WEBHOOK_ENDPOINT_CONCURRENCY, 8).

jest.setTimeout(60_000);

let stack: Stack;
let receiver: WebhookReceiver;
let api: ReturnType<typeof client>;
let productId: string;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  // The request timeout is the default one: on a busy machine the tests' 600 ms could time out a
  // request that then arrives twice (a retry), which is not what the burst below is about.
  stack = await startStack({ webhookDispatchIntervalMs: 3_600_000, webhookTimeoutMs: 10_000 });
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  productId = (await api('POST', '/api/v1/products', { name: 'Piped' })).body.id;
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

const hook = async (path: string) =>
  (await api('POST', '/api/v1/webhooks', { url: `${receiver.url}${path}`, events: ['license.created'] })).body as {
    id: string;
  };
async function issue(email: string): Promise<string> {
  const res = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: email });
  expect(res.status).toBe(201);
  return res.body.license_key;
}

it('a new licence reaches its webhook with no poll of the store, and a test event too', async () => {
  const { id } = await hook('/at-once');
  const key = await issue('at-once@example.com');
  const [req] = await receiver.waitFor('/at-once', 1);
  expect(JSON.parse(req.body).data.license.key).toBe(key);
  expect((await api('POST', `/api/v1/webhooks/${id}/test`)).status).toBe(202);
  const [, test] = await receiver.waitFor('/at-once', 2);
  expect(JSON.parse(test.body).type).toBe('webhook.test');
  await eventually(async () =>
    expect(
      ((await api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.data as { status: string }[]).map((d) => d.status),
    ).toEqual(['delivered', 'delivered']),
  );
});

it('a burst to one endpoint arrives once per event, never more than 8 requests at a time', async () => {
  receiver.slow('/burst', 50); // requests overlap
  const { id } = await hook('/burst');
  const keys = new Set(await Promise.all(Array.from({ length: 40 }, (_, i) => issue(`burst-${i}@example.com`))));
  const got = await receiver.waitFor('/burst', 40, 30_000);
  expect(new Set(got.map((r) => JSON.parse(r.body).data.license.key))).toEqual(keys);
  const delivered = await eventually(
    async () => {
      const list = (await api('GET', `/api/v1/webhooks/${id}/deliveries?limit=100`)).body.data as {
        status: string;
        attempts: number;
      }[];
      expect(list.filter((d) => d.status === 'delivered')).toHaveLength(40);
      return list;
    },
    { timeoutMs: 10_000 },
  );
  expect(delivered.every((d) => d.attempts === 1)).toBe(true);
  // Everything is recorded, so nothing more is on its way: each webhook-id arrived exactly once.
  expect(receiver.at('/burst')).toHaveLength(40);
  expect(new Set(receiver.at('/burst').map((r) => r.headers['webhook-id'])).size).toBe(40);
  expect(receiver.mostAtOnce('/burst')).toBeLessThanOrEqual(8);
});
