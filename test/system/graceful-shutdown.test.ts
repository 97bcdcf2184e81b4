import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'nats';
import { start as startAccount } from '../../services/account/src/main';
import { start as startProduct } from '../../services/product/src/main';
import { credentialOf, envFor } from '../../scripts/lib/topology';
import { spawnComponent } from '../../scripts/lib/launch';
import { waitForServing } from '../../scripts/lib/health';
import { freePort, waitForPort } from '../../scripts/lib/net';
import { EventLog } from '../support/events';
import { testTopology } from '../support/stack';
import { setUpEvents } from '../../scripts/lib/events-setup';
import { eventually } from '../support/eventually';

// SIGTERM to real processes under load. Two licence-service processes behind
// one gateway process (the gateway balances over both addresses, as over a
// headless Kubernetes Service); the account and product services run in this
// process. While clients keep issuing and validating licences: SIGTERM one
// licence service, then the gateway. No request the gateway accepted fails,
// and every licence issued has its license.created event in the stream.
// Own stack: every component here is a real process that receives SIGTERM.

jest.setTimeout(90_000);

interface Outcome {
  status?: number;
  /** The Connection header of the answer. */
  connection?: string;
  path?: string;
  error?: string;
  body?: any;
}

/** One request on its own connection (no keep-alive): refused at connect, or answered in full. */
function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<Outcome> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      {
        method,
        agent: false,
        headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            connection: res.headers.connection,
            path,
            body: text ? JSON.parse(text) : undefined,
          }),
        );
        res.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
      },
    );
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end(payload);
  });
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

it('SIGTERM to a licence service and then to the gateway during load: no accepted request fails, no event is lost', async () => {
  const t = testTopology({ metricsAnyPort: true });
  await setUpEvents(t);
  const logDir = mkdtempSync(join(tmpdir(), 'licensing-shutdown-'));
  const account = await startAccount({ env: envFor('account', t, { port: 0 }) });
  const product = await startProduct({ env: envFor('product', t, { port: 0 }) });
  const productAddr = `127.0.0.1:${product.port}`;
  const [licA, licB, gwPort] = [await freePort(), await freePort(), await freePort()];
  const children: ChildProcess[] = [];
  const events = await EventLog.open(t.natsUrl, t.stream).catch(() => undefined);
  try {
    const a = spawnComponent(
      'license',
      envFor('license', t, { port: licA, addrs: { product: productAddr, webhook: '127.0.0.1:9' } }),
      join(logDir, 'license-a.log'),
    );
    const b = spawnComponent(
      'license',
      envFor('license', t, { port: licB, addrs: { product: productAddr, webhook: '127.0.0.1:9' } }),
      join(logDir, 'license-b.log'),
    );
    children.push(a.child, b.child);
    await waitForServing(`127.0.0.1:${licA}`, 30_000, a.exited);
    await waitForServing(`127.0.0.1:${licB}`, 30_000, b.exited);
    const unused = '127.0.0.1:9';
    const addrs = {
      account: `127.0.0.1:${account.port}`,
      product: productAddr,
      license: `ipv4:127.0.0.1:${licA},127.0.0.1:${licB}`,
      checkout: unused,
      checkoutPage: 'http://127.0.0.1:9',
      webPage: 'http://127.0.0.1:9', // no page is asked for here
      webhook: unused,
      notification: unused,
    };
    const gw = spawnComponent(
      'gateway',
      {
        ...envFor('gateway', t, { port: gwPort, addrs }),
        SHUTDOWN_TIMEOUT_MS: '10000',
        // As Kubernetes runs it (base/gateway.yaml: 5000): it keeps serving a while after SIGTERM, draining.
        SHUTDOWN_DRAIN_DELAY_MS: '1000',
        RATE_LIMITS_ENABLED: 'false',
        LOG_LEVEL: 'info',
      },
      join(logDir, 'gateway.log'),
    );
    children.push(gw.child);
    await Promise.race([waitForPort('127.0.0.1', gwPort, 30_000), gw.exited]);
    const url = `http://127.0.0.1:${gwPort}`;

    const { AccountServiceClient } = await import('@licensing/proto');
    const { createClient } = await import('@licensing/runtime');
    const admin = createClient(AccountServiceClient, `127.0.0.1:${account.port}`, credentialOf(t, 'operator'));
    const acct = await admin.call.createAccount({ name: 'Load', plan: 'enterprise' });
    admin.close();
    const key = acct.secret;
    const prod = await call(url, key, 'POST', '/api/v1/products', { name: 'Under load' });
    expect(prod.status).toBe(201);

    // Load: workers issue and validate licences until the gateway stops accepting.
    const outcomes: Outcome[] = [];
    const issued: string[] = [];
    let phase = 'before';
    const phases: string[] = [];
    const worker = async () => {
      for (;;) {
        const createdLicence = await call(url, key, 'POST', '/api/v1/licenses', {
          product_id: prod.body.id,
          customer_email: 'load@example.com',
        });
        outcomes.push(createdLicence);
        phases.push(phase);
        if (createdLicence.error) return;
        if (createdLicence.status === 201) issued.push(createdLicence.body.license.id);
        const validated = await call(url, key, 'POST', '/api/v1/keys/validate', {
          key: createdLicence.body?.license_key ?? 'x',
        });
        outcomes.push(validated);
        phases.push(phase);
        if (validated.error) return;
        // The GET the apps send, answered from the gateway's cache by its fast path (no Express): while
        // the gateway drains it must still answer in full, with Connection: close like every other.
        const cached = await call(
          url,
          key,
          'GET',
          `/api/v1/licenses/validate?license_key=${createdLicence.body?.license_key ?? 'x'}`,
        );
        outcomes.push(cached);
        phases.push(phase);
        if (cached.error) return;
      }
    };
    const workers = Array.from({ length: 8 }, worker);

    // Each phase runs until it has seen traffic of its own (not for a fixed time).
    const answeredIn = (p: string) => phases.filter((x, i) => x === p && !outcomes[i].error).length;
    await eventually(() => expect(answeredIn('before')).toBeGreaterThanOrEqual(40), { timeoutMs: 30_000 });
    phase = 'license-a-stopping';
    a.child.kill('SIGTERM');
    expect(await exitOf(a.child)).toBe(0);
    phase = 'license-a-gone';
    await eventually(() => expect(answeredIn('license-a-gone')).toBeGreaterThanOrEqual(20), { timeoutMs: 30_000 });
    phase = 'gateway-stopping';
    gw.child.kill('SIGTERM');
    await Promise.all(workers);
    expect(await exitOf(gw.child)).toBe(0);

    // Every answer is a complete 2xx. The only connection errors are after the
    // gateway's SIGTERM, from connections it never took a request on: refused,
    // or reset while still in the kernel's accept queue when the listener closed.
    const answered = outcomes.filter((o) => !o.error);
    const failures = outcomes
      .map((o, i) => ({ ...o, phase: phases[i] }))
      .filter((o) =>
        o.error
          ? !(o.phase === 'gateway-stopping' && ['ECONNREFUSED', 'ECONNRESET'].includes(o.error))
          : o.status! >= 300,
      );
    expect(failures).toEqual([]);
    // While it drained (SHUTDOWN_DRAIN_DELAY_MS), the fast path's cached answers were whole and said
    // Connection: close (before the fix, the first of them crashed the gateway).
    const drainedGets = outcomes.filter(
      (o, i) => phases[i] === 'gateway-stopping' && o.status === 200 && o.path?.startsWith('/api/v1/licenses/validate'),
    );
    expect(drainedGets.some((o) => o.connection === 'close')).toBe(true);
    // ...and the gateway itself says every request it accepted was answered in full.
    // (Its last lines may reach the log file after its exit: the pipe to the file is read a little later.)
    const drained = () =>
      readFileSync(join(logDir, 'gateway.log'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('http server drained'))
        .map((l) => JSON.parse(l));
    await eventually(() => expect(drained()).toHaveLength(1), { timeoutMs: 10_000 });
    expect(drained()).toEqual([expect.objectContaining({ unfinished: 0, aborted_by_clients: 0 })]);
    expect(answered.length).toBeGreaterThan(50);
    expect(phases.filter((p, i) => p === 'license-a-gone' && !outcomes[i].error).length).toBeGreaterThan(5);

    // Every licence issued has its event: none was lost with the stopped licence service.
    expect(events).toBeDefined();
    const want = new Set(issued);
    await eventually(
      () => {
        const seen = new Set(
          events!
            .all()
            .filter((e) => e.type === 'license.created')
            .map((e) => (e.data as { license: { id: string } }).license.id),
        );
        expect([...want].filter((id) => !seen.has(id))).toEqual([]);
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await events?.close();
    await account.ctx.db.dropDatabase().catch(() => undefined);
    await product.ctx.db.dropDatabase().catch(() => undefined);
    await account.stop();
    await product.stop();
    const nc = await connect({ servers: t.natsUrl });
    await (await nc.jetstreamManager()).streams.delete(t.stream).catch(() => undefined);
    await nc.close();
    rmSync(logDir, { recursive: true, force: true });
  }
});
