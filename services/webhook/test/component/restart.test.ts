import { eventually } from '../../../../test/support/eventually';
import { newAccount, startWebhook, type RunningWebhook } from './running-webhook';

// The service stopped and started again over the same store and stream: what was published while it
// was away is delivered once it is back (its durable consumer resumes), and deliveries left pending
// arrive, none twice once accepted. Two requests per endpoint at once, as in delivery.test.ts.

jest.setTimeout(60_000);

let hooks: RunningWebhook;
const account = newAccount();

beforeAll(async () => {
  hooks = await startWebhook({ webhookEndpointConcurrency: 2 });
});

afterAll(async () => {
  await hooks?.stop();
});

const keyOf = (r: { body: string }) => JSON.parse(r.body).data.license.key as string;

it('an event that happened while the webhook service was down is delivered once it is back', async () => {
  await hooks.endpoint(account, '/while-down', ['license.created']);
  await hooks.stopService();
  const { key } = await hooks.licenceCreated(account, 'down@example.com'); // its publisher does not depend on the webhook service
  await hooks.startAgain();
  const [req] = await hooks.receiver.waitFor('/while-down', 1);
  expect(keyOf(req)).toBe(key);
});

it('stopped with deliveries pending and started again, every event arrives, none twice once accepted', async () => {
  hooks.receiver.answer('/restart', 503, 200);
  await hooks.endpoint(account, '/restart', ['license.created']);
  const keys: string[] = [];
  for (let i = 0; i < 3; i++) keys.push((await hooks.licenceCreated(account)).key);
  // Some first attempts failed: retries are pending in the store. (On a loaded machine, right after a
  // restart, the first attempt has been seen to take over 10 s.)
  await hooks.receiver.waitFor('/restart', 1, 25_000);
  await hooks.stopService();
  await hooks.startAgain();
  // The receiver answered 503 to the first request only; everything after was accepted.
  const accepted = await eventually(
    () => {
      const byId = new Map<string, number>();
      for (const r of hooks.receiver.at('/restart').slice(1))
        byId.set(String(r.headers['webhook-id']), (byId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
      expect(byId.size).toBe(3);
      return byId;
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  expect([...accepted.values()]).toEqual([1, 1, 1]);
  expect(new Set(hooks.receiver.at('/restart').map(keyOf))).toEqual(new Set(keys));
  // And an event published after the restart is fanned out by the new instance. (Under load this has
  // been seen to take over 10 s: the stopped instance's pull request may still be handed events until
  // it expires, and those wait out ack_wait. See events/fanout.ts.)
  const after = (await hooks.licenceCreated(account)).key;
  await hooks.receiver.waitFor('/restart', 5, 30_000);
  expect(hooks.receiver.at('/restart').some((r) => keyOf(r) === after)).toBe(true);
}, 90_000);
