import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { envFor } from '../../scripts/lib/topology';
import { spawnComponent } from '../../scripts/lib/launch';
import { waitForServing } from '../../scripts/lib/health';
import { client, startStack, type Stack } from '../support/stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';

// The webhook service killed with SIGKILL in the middle of a delivery (no
// graceful anything): a new process finds the delivery in MongoDB once its
// lease runs out and sends it again, so the event still arrives.
// Own stack: its webhook service is replaced by a real process that it kills with SIGKILL.

jest.setTimeout(60_000);

let stack: Stack;
let receiver: WebhookReceiver;
const logDir = mkdtempSync(join(tmpdir(), 'licensing-webhook-crash-'));
const children: ChildProcess[] = [];

function spawnWebhook(): Promise<ChildProcess> {
  const port = Number(stack.addrs.webhook.split(':')[1]);
  const { child, exited } = spawnComponent(
    'webhook',
    { ...envFor('webhook', stack.topology, { port }), METRICS_PORT: '0' },
    join(logDir, `webhook-${children.length}.log`),
  );
  children.push(child);
  return waitForServing(stack.addrs.webhook, 30_000, exited).then(() => child);
}

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await startStack();
  await stack.stopService('webhook'); // replaced by a real process on the same address
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await stack?.stop();
  await receiver?.stop();
  rmSync(logDir, { recursive: true, force: true });
});

it('a delivery in flight when the webhook process is SIGKILLed is sent again by the next process', async () => {
  const first = await spawnWebhook();
  const acct = await stack.newAccount();
  const api = client(stack.url, acct.apiKey);
  receiver.answer('/crash', 'hang', 200);
  const hook = await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/crash`, events: ['license.created'] });
  expect(hook.status).toBe(201);
  const product = await api('POST', '/api/v1/products', { name: 'Crashy' });
  const licence = await api('POST', '/api/v1/licenses', {
    product_id: product.body.id,
    customer_email: 'crash@example.com',
  });

  const [inFlight] = await receiver.waitFor('/crash', 1);
  first.kill('SIGKILL'); // mid-attempt: the receiver has not answered
  await new Promise((r) => first.once('exit', r));

  await spawnWebhook();
  const [, again] = await receiver.waitFor('/crash', 2, 20_000); // after the dead attempt's lease
  expect(again.headers['webhook-id']).toBe(inFlight.headers['webhook-id']);
  expect(JSON.parse(again.body).data.license.key).toBe(licence.body.license_key);
  // One recorded attempt: the killed one died before it could record its outcome.
  await eventually(
    async () =>
      expect((await api('GET', `/api/v1/webhooks/${hook.body.id}/deliveries`)).body.data).toEqual([
        expect.objectContaining({ status: 'delivered', attempts: 1 }),
      ]),
    { intervalMs: 100 },
  );
});
