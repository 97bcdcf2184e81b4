import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { envFor } from '../../scripts/lib/topology';
import { spawnComponent } from '../../scripts/lib/launch';
import { waitForServing } from '../../scripts/lib/health';
import { freePort } from '../../scripts/lib/net';
import { client, startStack, type Stack } from '../support/stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';

// Two webhook service processes over the same store, as the manifests run them
// (two replicas), share one endpoint's backlog: its events wait in the stream
// while no webhook service runs, then both fan them out (each hands what it
// recorded straight to its own dispatcher) and both poll the store. Each
// delivery must go out once, and the endpoint must never get more requests at
// once than WEBHOOK_ENDPOINT_CONCURRENCY, whichever replica sends them: the
// endpoint's lease keeps the other replica out.
// Own stack: its webhook service is replaced by two processes of its own, started and stopped by the test.

const CONCURRENCY = 2;

jest.setTimeout(90_000);

let stack: Stack;
let receiver: WebhookReceiver;
const logDir = mkdtempSync(join(tmpdir(), 'licensing-webhook-replicas-'));
const children: ChildProcess[] = [];

/** A webhook service process on `port`, polling every 100 ms, with CONCURRENCY requests per endpoint. */
async function spawnWebhook(port: number): Promise<ChildProcess> {
  const addr = `127.0.0.1:${port}`;
  const { child, exited } = spawnComponent(
    'webhook',
    {
      ...envFor('webhook', stack.topology, { port }),
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
      // Not the stacks' 600 ms: a freshly started process on a busy machine took longer for its first
      // requests, and a timed-out attempt is a second one (this test counts attempts, not timeouts).
      WEBHOOK_TIMEOUT_MS: '10000',
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
      METRICS_PORT: '0',
    },
    join(logDir, `webhook-${children.length}.log`),
  );
  children.push(child);
  await waitForServing(addr, 30_000, exited);
  return child;
}

async function stopGracefully(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, 'exit');
  child.kill('SIGTERM'); // waits for the deliveries in flight
  await gone;
}

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await startStack();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await stack?.stop();
  await receiver?.stop();
  rmSync(logDir, { recursive: true, force: true });
});

it(`two replicas deliver a backlog of 20 for one endpoint once each, at most ${CONCURRENCY} requests at a time`, async () => {
  const acct = await stack.newAccount();
  const api = client(stack.url, acct.apiKey);
  receiver.slow('/replicas', 150); // long enough for requests from a second sender to overlap, were there one
  const hook = await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/replicas`, events: ['license.created'] });
  expect(hook.status).toBe(201);
  const product = await api('POST', '/api/v1/products', { name: 'Replicated' });
  // The stack's service makes way for two processes, one on its address (the gateway's) and one beside it.
  // Meanwhile the events wait in the stream: the backlog reaches both replicas at once.
  await stack.stopService('webhook');
  for (let i = 0; i < 20; i++)
    expect(
      (await api('POST', '/api/v1/licenses', { product_id: product.body.id, customer_email: `r${i}@example.com` }))
        .status,
    ).toBe(201);
  expect(receiver.at('/replicas')).toEqual([]);
  const [first, second] = await Promise.all([
    spawnWebhook(Number(stack.addrs.webhook.split(':')[1])),
    freePort().then(spawnWebhook),
  ]);

  const deliveries = async () =>
    (await api('GET', `/api/v1/webhooks/${hook.body.id}/deliveries?limit=100`)).body.data as {
      status: string;
      attempts: number;
    }[];
  const done = await eventually(
    async () => {
      const all = await deliveries();
      expect(all.filter((d) => d.status === 'delivered')).toHaveLength(20);
      return all;
    },
    { timeoutMs: 40_000, intervalMs: 200 },
  );
  expect(done.map((d) => d.attempts)).toEqual(Array(20).fill(1));
  // Nothing is in flight once both have stopped: what the receiver has now is everything they sent.
  await Promise.all([stopGracefully(first), stopGracefully(second)]);

  const ids = receiver.at('/replicas').map((r) => String(r.headers['webhook-id']));
  expect(new Set(ids).size).toBe(20);
  expect(ids).toHaveLength(20); // each webhook-id exactly once
  expect(receiver.mostAtOnce('/replicas')).toBeLessThanOrEqual(CONCURRENCY);
});
