import { verifySignature } from '../../../../test/support/webhook-receiver';
import { newAccount, startWebhook, type RunningWebhook } from './running-webhook';

// Signing secrets through a rotation: the previous secret signs beside the new one for 24 hours
// (the service's clock is moved on here), never more than two sign at once, and the test event is
// sent on demand to show it.

let hooks: RunningWebhook;
const account = newAccount();

beforeAll(async () => {
  hooks = await startWebhook();
});

afterAll(async () => {
  await hooks?.stop();
});

const rotate = async (id: string) => (await hooks.api.rotateSecret({ account_id: account, id })).secret;
const sendTest = (id: string) => hooks.api.sendTestEvent({ account_id: account, id });
const signatures = (r: { headers: Record<string, unknown> }) => String(r.headers['webhook-signature']).split(' ');

it('during a secret rotation both secrets sign, and the test event can be sent on demand', async () => {
  const { id, secret } = await hooks.endpoint(account, '/rotating', ['*']);
  const rotated = await rotate(id);
  const sent = await sendTest(id);
  expect(sent).toMatchObject({ endpoint_id: id, event_type: 'webhook.test' });
  const [req] = await hooks.receiver.waitFor('/rotating', 1);
  expect(JSON.parse(req.body).type).toBe('webhook.test');
  expect(signatures(req)).toHaveLength(2);
  expect(verifySignature(secret, req)).toBe(true);
  expect(verifySignature(rotated, req)).toBe(true);
});

it('the previous secret stops signing 24 hours after a rotation', async () => {
  const { id, secret } = await hooks.endpoint(account, '/overlap', ['*']);
  const rotated = await rotate(id);
  hooks.clock.advance(24 * 3600_000 + 1000);
  await sendTest(id);
  const [req] = await hooks.receiver.waitFor('/overlap', 1);
  expect(signatures(req)).toHaveLength(1);
  expect(verifySignature(rotated, req)).toBe(true);
  expect(verifySignature(secret, req)).toBe(false);
});

it('after three rotations only the newest two secrets sign, and after the overlap only the newest', async () => {
  const { id, secret } = await hooks.endpoint(account, '/rotated-thrice', ['*']);
  const made = [secret];
  for (let i = 0; i < 3; i++) made.push(await rotate(id));
  await sendTest(id);
  const [during] = await hooks.receiver.waitFor('/rotated-thrice', 1);
  expect(signatures(during)).toHaveLength(2);
  expect(made.map((s) => verifySignature(s, during))).toEqual([false, false, true, true]);
  hooks.clock.advance(24 * 3600_000 + 1000);
  await sendTest(id);
  const [, after] = await hooks.receiver.waitFor('/rotated-thrice', 2);
  expect(signatures(after)).toHaveLength(1);
  expect(made.map((s) => verifySignature(s, after))).toEqual([false, false, false, true]);
});
