import { eventually } from '../../../../test/support/eventually';
import type { LicenseData } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import { eventOf, newAccount, startWebhook, type RunningWebhook } from './running-webhook';

// Events reach webhooks without waiting for the dispatcher's poll of the store: the fan-out hands
// each delivery it records straight to the dispatcher. Here the poll would first run in an hour, so
// whatever arrives came that way. The endpoint concurrency is the default one
// (WEBHOOK_ENDPOINT_CONCURRENCY, 8).

jest.setTimeout(60_000);

let hooks: RunningWebhook;
const account = newAccount();

beforeAll(async () => {
  // The request timeout is the default one: on a busy machine the tests' 600 ms could time out a
  // request that then arrives twice (a retry), which is not what the burst below is about.
  hooks = await startWebhook({ webhookDispatchIntervalMs: 3_600_000, webhookTimeoutMs: 10_000 });
});

afterAll(async () => {
  await hooks?.stop();
});

const hook = (path: string) => hooks.endpoint(account, path, ['license.created']);
const issue = async (email: string) => (await hooks.licenceCreated(account, email)).key;
const keyOf = (r: { body: string }) => JSON.parse(r.body).data.license.key as string;

it('a new licence reaches its webhook with no poll of the store, and a test event too', async () => {
  const { id } = await hook('/at-once');
  const key = await issue('at-once@example.com');
  const [req] = await hooks.receiver.waitFor('/at-once', 1);
  expect(keyOf(req)).toBe(key);
  await hooks.api.sendTestEvent({ account_id: account, id });
  const [, test] = await hooks.receiver.waitFor('/at-once', 2);
  expect(JSON.parse(test.body).type).toBe('webhook.test');
  await eventually(async () =>
    expect((await hooks.deliveries(account, id)).map((d) => d.status)).toEqual(['delivered', 'delivered']),
  );
});

it('a burst to one endpoint arrives once per event, never more than 8 requests at a time', async () => {
  hooks.receiver.slow('/burst', 50); // requests overlap
  const { id } = await hook('/burst');
  const keys = new Set(await Promise.all(Array.from({ length: 40 }, (_, i) => issue(`burst-${i}@example.com`))));
  const got = await hooks.receiver.waitFor('/burst', 40, 30_000);
  expect(new Set(got.map(keyOf))).toEqual(keys);
  const delivered = await eventually(
    async () => {
      const list = await hooks.deliveries(account, id);
      expect(list.filter((d) => d.status === 'delivered')).toHaveLength(40);
      return list;
    },
    { timeoutMs: 10_000 },
  );
  expect(delivered.every((d) => d.attempts === 1)).toBe(true);
  // Everything is recorded, so nothing more is on its way: each webhook-id arrived exactly once.
  expect(hooks.receiver.at('/burst')).toHaveLength(40);
  expect(new Set(hooks.receiver.at('/burst').map((r) => r.headers['webhook-id'])).size).toBe(40);
  expect(hooks.receiver.mostAtOnce('/burst')).toBeLessThanOrEqual(8);
});

it('a license.created or license.rerolled that asks for the licence mail reaches the webhook without send_email', async () => {
  await hooks.endpoint(account, '/mail-asked', ['license.created', 'license.rerolled']);
  const license: LicenseData = {
    id: newId('lic'),
    key: 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF',
    product_id: newId('prod'),
    customer_email: 'down-create@example.com',
    status: 'active',
    expires_at: null,
    created_at: new Date().toISOString(),
    entitlements: [],
  };
  const created = eventOf('license.created', account, { license });
  const rerolled = eventOf('license.rerolled', account, {
    license: { ...license, key: 'GGGGG-HHHHH-JJJJJ-KKKKK-MMMMM-NNNNN' },
    previous_key: license.key,
    previous_key_valid_until: new Date().toISOString(),
  });
  // As the licence service writes them when the API call asked for the mail (send_email on the envelope).
  for (const e of [created, rerolled]) await hooks.publish({ ...e, send_email: true });
  const delivered = (await hooks.receiver.waitFor('/mail-asked', 2)).map((r) => JSON.parse(r.body));
  for (const e of [created, rerolled]) {
    // The vendor's webhook gets the event without the internal field.
    const body = delivered.find((b) => b.id === e.id);
    expect(body.data.license.key).toBe(e.data.license.key);
    expect(body).not.toHaveProperty('send_email');
    expect(Object.keys(body).sort()).toEqual(['created_at', 'data', 'id', 'type']);
  }
});
