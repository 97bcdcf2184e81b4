import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from 'nats';
import { connectMongo } from '@licensing/runtime';
import { components, services } from '../../scripts/lib/components';
import { client, startStack, type Stack } from '../support/stack';
import { freePort } from '../../scripts/lib/net';
import { eventually } from '../support/eventually';
import { credentialOf } from '../../scripts/lib/topology';
import { WebClient } from '../support/web-client';

// The operator CLI and npm start's refusals, run as real processes from the
// build (npm test builds before it runs jest).
// Own stack: the operator CLI writes accounts, keys and re-seals over the stack's stores, and it starts npm
// start's refusals with settings of their own.
const exec = promisify(execFile);
const root = join(__dirname, '..', '..');
const script = (name: string) => join(root, 'scripts', 'dist', `${name}.js`);

let stack: Stack;

beforeAll(async () => {
  if (!existsSync(script('admin'))) await exec(process.execPath, [join(root, 'scripts', 'build.mjs')]);
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

// Every test runs the CLI several times, each a process of its own that loads the runtime: seconds apiece
// on a busy machine.
jest.setTimeout(120_000);

const admin = (...args: string[]) => adminWith({}, ...args);

/** `count` calls of `make`, ten at a time, in order of their index: what each answered. */
async function inBatches<T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let from = 0; from < count; from += 10)
    out.push(...(await Promise.all(Array.from({ length: Math.min(10, count - from) }, (_, j) => make(from + j)))));
  return out;
}

async function adminWith(
  over: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    ACCOUNT_GRPC_ADDR: stack.addrs.account,
    INTERNAL_TOKEN: credentialOf(stack.topology, 'operator').token,
    ...over,
  };
  try {
    const { stdout, stderr } = await exec(process.execPath, [script('admin'), ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('npm run admin', () => {
  it('create-account prints one JSON line with a working key; create-key and revoke-key work', async () => {
    const created = await admin('create-account', '--name', 'CLI Vendor', '--plan', 'pro');
    expect(created.code).toBe(0);
    expect(created.stdout.trim().split('\n')).toHaveLength(1);
    const { account_id, api_key } = JSON.parse(created.stdout);
    expect(account_id).toMatch(/^acct_/);
    expect((await client(stack.url, api_key)('GET', '/api/v1/products')).status).toBe(200);

    const key = JSON.parse((await admin('create-key', '--account', account_id, '--scope', 'validate')).stdout);
    expect(key).toEqual({ key_id: expect.stringMatching(/^key_/), api_key: expect.stringMatching(/^lk_val_/) });
    const revoked = await admin('revoke-key', '--account', account_id, '--key-id', key.key_id);
    expect(JSON.parse(revoked.stdout)).toEqual({ key_id: key.key_id, revoked_at: expect.any(String) });
    const listed = JSON.parse((await admin('list-keys', '--account', account_id)).stdout);
    expect(listed).toMatchObject({ live_keys: 1, max_live_keys: 50 });
    expect(listed.data.map((k: { id: string }) => k.id)).not.toContain(key.key_id); // live keys only
    expect(JSON.stringify(listed)).not.toContain(api_key);
    const revokedList = JSON.parse((await admin('list-keys', '--account', account_id, '--state', 'revoked')).stdout);
    expect(revokedList.data.map((k: { id: string }) => k.id)).toEqual([key.key_id]);
    // A key with a role does only what its role may (docs/api.md, "Roles"): a support key reads, and is
    // refused creating a product.
    const support = JSON.parse((await admin('create-key', '--account', account_id, '--role', 'support')).stdout);
    expect((await client(stack.url, support.api_key)('GET', '/api/v1/products')).status).toBe(200);
    const refused = await client(stack.url, support.api_key)('POST', '/api/v1/products', { name: 'Not mine to make' });
    expect([refused.status, refused.body.code]).toEqual([403, 'forbidden']);

    // The audit log of the account, as JSON lines, newest first: what the operator did is named so.
    const lines = await eventually(
      async () => {
        const out = await admin('audit-export', '--account', account_id, '--since', '2020-01-01');
        expect(out.code).toBe(0);
        const entries = out.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(entries.filter((e) => e.target.id === key.key_id).map((e) => e.action)).toEqual([
          'api_key.revoked',
          'api_key.created',
        ]);
        return entries;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(lines.find((e) => e.target.id === key.key_id)).toMatchObject({
      id: expect.stringMatching(/^aud_/),
      actor: { type: 'system', id: 'operator', name: 'operator' },
      request_id: null,
    });
    const bad = await admin('audit-export', '--account', account_id, '--since', 'last tuesday');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('since');
  });

  it('list-keys prints every live key however many revoked ones are newer; revoke-all-keys revokes them all', async () => {
    const { accountId: account_id, apiKey: api_key } = await stack.newAccount();
    // Ten at a time: over two hundred calls one after another are most of this test's time on a busy machine.
    const live = await inBatches(29, async (i) => {
      return (await stack.admin.createApiKey({ account_id, scope: 'full', name: `live ${i}` })).secret;
    });
    // 100 regenerations' worth of revoked keys, all newer than the live ones.
    await inBatches(100, async (i) => {
      const k = await stack.admin.createApiKey({ account_id, scope: 'full', name: `old ${i}` });
      await stack.admin.revokeApiKey({ account_id, key_id: k.api_key!.id });
    });
    const listed = JSON.parse((await admin('list-keys', '--account', account_id)).stdout);
    expect(listed.live_keys).toBe(30);
    expect(listed.data).toHaveLength(30);
    expect(listed.data.every((k: { revoked_at: unknown }) => k.revoked_at === null)).toBe(true);
    expect(
      JSON.parse((await admin('list-keys', '--account', account_id, '--state', 'revoked')).stdout).data,
    ).toHaveLength(100);

    // Each key in use (so in the gateway's auth cache) until revoke-all-keys.
    for (const secret of [api_key, ...live])
      expect((await client(stack.url, secret)('GET', '/api/v1/products')).status).toBe(200);
    const all = await admin('revoke-all-keys', '--account', account_id);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ revoked: 30 });
    // Every one of them stops working on the gateway within a second.
    for (const secret of [api_key, ...live])
      await eventually(
        async () => expect((await client(stack.url, secret)('GET', '/api/v1/products')).status).toBe(401),
        {
          timeoutMs: 1500,
        },
      );
    expect(await stack.admin.listApiKeys({ account_id, page: { limit: 100, starting_after: '' } })).toMatchObject({
      data: [],
      live_keys: 0,
    });
    expect((await admin('revoke-all-keys')).stderr).toContain('revoke-all-keys needs --account');
  });

  it('set-plan and set-limits change the account and the gateway honours them', async () => {
    const { account_id, api_key } = JSON.parse((await admin('create-account', '--name', 'Limits')).stdout);
    const api = client(stack.url, api_key);
    expect((await api('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
      '"hour";q=100;w=3600, "minute";q=100;w=60',
    );
    expect(JSON.parse((await admin('set-plan', '--account', account_id, '--plan', 'pro')).stdout)).toEqual({
      account_id,
      name: 'Limits',
      plan: 'pro',
      per_minute_limit: null,
      per_hour_limit: null,
    });
    const limits = JSON.parse(
      (await admin('set-limits', '--account', account_id, '--per-minute', '300', '--per-hour', '5000')).stdout,
    );
    expect(limits).toMatchObject({ plan: 'pro', per_minute_limit: 300, per_hour_limit: 5000 });
    await eventually(
      async () =>
        expect((await api('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
          '"hour";q=5000;w=3600, "minute";q=300;w=60',
        ),
      { intervalMs: 50 },
    );
    expect(JSON.parse((await admin('set-limits', '--account', account_id, '--per-hour', '0')).stdout)).toMatchObject({
      per_minute_limit: 300,
      per_hour_limit: null,
    });
    expect((await admin('set-limits', '--account', account_id)).code).toBe(2);
    expect((await admin('set-limits', '--account', account_id, '--per-minute', 'lots')).code).toBe(2);
    expect(JSON.parse((await admin('set-plan', '--account', account_id, '--plan', 'platinum')).stderr)).toMatchObject({
      error: 'invalid_request',
    });
  });

  it('refuses bad usage with exit 2 and service errors with exit 1 and a JSON error', async () => {
    expect((await admin()).code).toBe(2);
    expect((await admin('drop-everything')).code).toBe(2);
    expect((await admin('create-account')).stderr).toContain('create-account needs --name');
    expect((await admin('create-account', '--name')).code).toBe(2);
    expect((await admin('create-key', '--account', 'acct_x', '--color', 'red')).code).toBe(2);
    // The API's text rule: no control characters in any value (a NUL cannot be in an argument at all).
    const control = await admin('create-account', '--name', 'Acme\u0001Corp');
    expect(control.code).toBe(2);
    expect(control.stderr).toContain('--name must not contain control characters (found U+0001)');
    expect((await admin('create-key', '--account', 'acct_x', '--name', 'a\u007fb')).stderr).toContain(
      '--name must not contain control characters (found U+007F)',
    );
    const bad = await admin('create-account', '--name', 'X', '--plan', 'gold');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: 'invalid_request', errors: [{ field: 'plan' }] });
    // Revocation is always scoped to an account.
    expect((await admin('revoke-key', '--key-id', 'key_nope')).stderr).toContain('revoke-key needs --account');
    const missing = await admin('revoke-key', '--account', 'acct_nope', '--key-id', 'key_nope');
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: 'not_found' });
    // A job's own flags: required, and no other.
    const noEmail = await admin('reset-mfa', '--service', 'account');
    expect([noEmail.code, noEmail.stderr]).toEqual([2, expect.stringContaining('reset-mfa needs --email')]);
    expect((await admin('reset-mfa', '--service', 'account', '--email', 'a@b.c', '--force', 'yes')).code).toBe(2);
    expect((await admin('create-account', '--name', 'X', '--owner-email', 'not an address')).code).toBe(1);
  });

  it('takes the operator token from INTERNAL_TOKEN_FILE (compose, the Kubernetes Job), and says which file is unusable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-token-'));
    try {
      const file = join(dir, 'internal_token_operator');
      writeFileSync(file, `${credentialOf(stack.topology, 'operator').token}\n`);
      const made = await adminWith(
        { INTERNAL_TOKEN: '', INTERNAL_TOKEN_FILE: file },
        'create-account',
        '--name',
        'FromFile',
      );
      expect(made.code).toBe(0);
      expect(JSON.parse(made.stdout).account_id).toMatch(/^acct_/);
      const missing = await adminWith({ INTERNAL_TOKEN_FILE: join(dir, 'nope') }, 'list-keys', '--account', 'acct_x');
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(`INTERNAL_TOKEN_FILE ${join(dir, 'nope')} cannot be read (ENOENT)`);
      writeFileSync(file, '\n');
      const empty = await adminWith({ INTERNAL_TOKEN_FILE: file }, 'list-keys', '--account', 'acct_x');
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('is empty');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A subscription's life, through npm start as it is (test mode): a monthly product sold on the hosted
 * page renews when its test clock passes the period end; with the failing card it goes past due (valid,
 * update_payment), then unpaid (suspended) after the payment grace; cancelled at period end and moved
 * past it, its licence is expired.
 */
async function subscriptionStory(url: string, api: ReturnType<typeof client>) {
  const DAY = 86_400_000;
  const monthly = await api('POST', '/api/v1/products', {
    name: 'Monthly',
    price: { amount: 1000, currency: 'EUR', interval: 'month' },
    policy: { payment_grace_days: 7 },
  });
  expect(monthly.status).toBe(201);
  const buy = async (card: string) => {
    const session = await api('POST', '/api/v1/checkout', {
      product_id: monthly.body.id,
      success_url: 'https://vendor.example/thanks',
    });
    expect(session.status).toBe(201);
    const buyer = new WebClient(url);
    const page = await buyer.get(new URL(session.body.url).pathname);
    const paid = await buyer.post(`/checkout/${session.body.id}/pay`, {
      _csrf: WebClient.csrf(page.html),
      email: 'subscriber@example.com',
      card,
    });
    expect(paid.status).toBe(303);
    const done = (await api('GET', `/api/v1/checkout/${session.body.id}`)).body;
    const sub = (await api('GET', `/api/v1/subscriptions/${done.subscription_id}`)).body;
    return { key: done.license_key as string, sub };
  };
  const validation = (key: string) => async () =>
    (await api('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`)).body;
  const advance = async (id: string, to: number) => {
    const res = await api('POST', `/api/v1/subscriptions/${id}/test_clock`, { advance_to: new Date(to).toISOString() });
    expect(res.status).toBe(200);
    return res.body;
  };

  const good = await buy('4242 4242 4242 4242');
  expect(good.sub).toMatchObject({ status: 'active', license_key: good.key });
  expect((await api('GET', `/api/v1/licenses/${good.key}`)).body.expires_at).toBe(good.sub.current_period_end);
  const renewed = await advance(good.sub.id, Date.parse(good.sub.current_period_end) + DAY);
  expect(renewed.status).toBe('active');
  expect(Date.parse(renewed.current_period_end)).toBeGreaterThan(Date.parse(good.sub.current_period_end));
  await eventually(async () => expect((await validation(good.key)()).expires_at).toBe(renewed.current_period_end), {
    timeoutMs: 10_000,
    intervalMs: 100,
  });

  const failing = await buy('4000 0000 0000 0341');
  const end = Date.parse(failing.sub.current_period_end);
  const pastDue = await advance(failing.sub.id, end + DAY);
  expect(pastDue.status).toBe('past_due');
  await eventually(
    async () => expect(await validation(failing.key)()).toMatchObject({ valid: true, next_action: 'update_payment' }),
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  expect((await advance(failing.sub.id, Date.parse(pastDue.current_period_end) + 8 * DAY)).status).toBe('unpaid');
  await eventually(
    async () => expect(await validation(failing.key)()).toMatchObject({ valid: false, code: 'subscription_unpaid' }),
    { timeoutMs: 10_000, intervalMs: 100 },
  );

  const cancel = await api('POST', `/api/v1/subscriptions/${good.sub.id}/cancel`, { at_period_end: true });
  expect(cancel.body).toMatchObject({ status: 'active', cancel_at_period_end: true });
  expect((await advance(good.sub.id, Date.parse(renewed.current_period_end) + DAY)).status).toBe('canceled');
  await eventually(
    async () =>
      expect(await validation(good.key)()).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' }),
    { timeoutMs: 10_000, intervalMs: 100 },
  );
}

describe('npm start', () => {
  async function startWith(env: Record<string, string>) {
    try {
      await exec(process.execPath, [script('start')], { env: { ...process.env, ...env }, timeout: 20_000 });
      return { code: 0, stderr: '' };
    } catch (err) {
      return err as { code: number; stderr: string };
    }
  }

  it('says plainly that NATS is unreachable and exits non-zero', async () => {
    const closed = await freePort();
    const out = await startWith({ NATS_URL: `nats://127.0.0.1:${closed}` });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`NATS is not reachable at nats://127.0.0.1:${closed}`);
  });

  it('says plainly that Redis is unreachable and exits non-zero', async () => {
    const closed = await freePort();
    const out = await startWith({ REDIS_URL: `redis://127.0.0.1:${closed}` });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`Redis is not reachable at redis://127.0.0.1:${closed}`);
  });

  it("on its default ports: a test-mode purchase's key lands in the mail folder; stopped and started again at once, it comes up (and the CLI finds it)", async () => {
    // The defaults (components.json) lie below the ports outgoing connections take, so a restart finds
    // them free. This run's own store, databases, stream and data folder; the machine's NATS and Redis.
    const id = randomBytes(3).toString('hex');
    const dataDir = mkdtempSync(join(tmpdir(), 'licensing-npm-start-'));
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      MONGO_URL: process.env.TEST_MONGO_URL!,
      DB_PREFIX: `t_start_${id}`,
      EVENTS_STREAM: `T_START_${id}`,
      EVENTS_SUBJECT_PREFIX: `t_start_${id}.events`,
      RATE_LIMIT_PREFIX: `t_start_${id}:rl`,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
    };
    const launch = async () => {
      const child = spawn(process.execPath, [script('start')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      const exit = once(child, 'exit') as Promise<[number | null]>;
      const up = eventually(
        () => {
          if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${out}`);
          const m = /Gateway listening at (http:\S+) /.exec(out);
          if (!m) throw new Error(`npm start is not up yet:\n${out}`);
          return m[1];
        },
        { timeoutMs: 90_000, intervalMs: 100 },
      );
      return { child, url: await up, exit, output: () => out };
    };
    const stop = async (run: { child: ChildProcess; exit: Promise<[number | null]>; output(): string }) => {
      run.child.kill('SIGINT');
      const [code] = await run.exit;
      expect([code, run.output()]).toEqual([0, expect.stringContaining('Stopped.')]);
    };
    try {
      const first = await launch();
      expect(first.url).toBe(`http://127.0.0.1:${components.find((c) => c.kind === 'gateway')!.ports.http}`);
      expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
      // The operator CLI finds the account service where this run recorded it.
      const cli = await exec(process.execPath, [script('admin'), 'create-account', '--name', 'Restarted'], {
        env: Object.fromEntries(
          Object.entries(env).filter(([k]) => k !== 'ACCOUNT_GRPC_ADDR' && k !== 'INTERNAL_TOKEN'),
        ),
      }).catch((err: { stderr: string }) => {
        throw new Error(`admin failed: ${err.stderr}`);
      });
      const { api_key } = JSON.parse(cli.stdout);
      // Development lets a webhook point at the developer's own machine, and says so: the README's
      // example receiver gets a signed license.created.
      expect(first.output()).toContain('Webhooks: endpoints on this machine');
      const api = client(first.url, api_key);
      const receiverPort = await freePort();
      const hook = await api('POST', '/api/v1/webhooks', {
        url: `http://127.0.0.1:${receiverPort}/webhooks`,
        events: ['license.created'],
      });
      expect(hook.status).toBe(201);
      const receiver = spawn(process.execPath, [join(root, 'examples', 'webhook-receiver', 'receiver.mjs')], {
        env: { ...process.env, WEBHOOK_SECRET: hook.body.secret, PORT: String(receiverPort) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let received = '';
      receiver.stdout!.on('data', (d) => (received += d));
      receiver.stderr!.on('data', (d) => (received += d));
      try {
        await eventually(() => expect(received).toContain('Receiving webhooks'), { timeoutMs: 10_000 });
        const product = await api('POST', '/api/v1/products', { name: 'Hooked' });
        const license = await api('POST', '/api/v1/licenses', {
          product_id: product.body.id,
          customer_email: 'dev@example.com',
        });
        expect([license.status, license.body]).toEqual([
          201,
          expect.objectContaining({ license_key: expect.any(String) }),
        ]);
        await eventually(() => expect(received).toMatch(/license\.created \S+ \(signature valid\)/), {
          timeoutMs: 30_000,
        });
      } finally {
        receiver.kill();
      }
      // The purchase mail, through npm start as it is: a buyer who pays on the hosted test-mode page
      // finds the key in the mail folder (.data/mail, here DATA_DIR/mail) within seconds.
      const sold = await api('POST', '/api/v1/products', { name: 'Sold', price: { amount: 900, currency: 'EUR' } });
      const session = await api('POST', '/api/v1/checkout', {
        product_id: sold.body.id,
        success_url: 'https://vendor.example/thanks',
      });
      expect(session.status).toBe(201);
      const buyer = new WebClient(first.url);
      const page = await buyer.get(new URL(session.body.url).pathname);
      const paid = await buyer.post(`/checkout/${session.body.id}/pay`, {
        _csrf: WebClient.csrf(page.html),
        email: 'buyer@example.com',
        card: '4242424242424242',
      });
      expect(paid.status).toBe(303);
      const licenseKey = await eventually(
        async () => {
          const s = (await api('GET', `/api/v1/checkout/${session.body.id}`)).body;
          expect(s.license_key).toEqual(expect.any(String));
          return s.license_key as string;
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      const mailDir = join(dataDir, 'mail');
      const mail = await eventually(
        () => {
          const mails = (existsSync(mailDir) ? readdirSync(mailDir) : [])
            .filter((f) => f.endsWith('.json'))
            .map((f) => JSON.parse(readFileSync(join(mailDir, f), 'utf8')) as Record<string, any>);
          const found = mails.find((m) => m.to === 'buyer@example.com');
          if (!found) throw new Error(`no mail to the buyer in ${mailDir} yet (${mails.length} mails)`);
          return found;
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      expect(mail.text).toContain(licenseKey);
      expect(mail.text).toContain('Sold');
      expect(mail.attachments.map((a: { filename: string }) => a.filename)).toEqual(['license.json']);
      await eventually(
        async () =>
          expect(
            ((await api('GET', '/api/v1/emails')).body.data as { to: string; status: string }[]).map((e) => [
              e.to,
              e.status,
            ]),
          ).toEqual([['buyer@example.com', 'sent']]),
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      await subscriptionStory(first.url, api);
      await stop(first);
      // At once: no waiting for sockets to close.
      const second = await launch();
      expect((await fetch(`${second.url}/readyz`)).status).toBe(200);
      expect((await client(second.url, api_key)('GET', '/api/v1/products')).status).toBe(200);
      await stop(second);
    } finally {
      const db = await connectMongo(process.env.TEST_MONGO_URL!, `t_start_${id}_account`);
      for (const s of services)
        await db
          .useDb(`t_start_${id}_${s.name}`)
          .dropDatabase()
          .catch(() => undefined);
      await db.close();
      const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
      await (await nc.jetstreamManager()).streams.delete(`T_START_${id}`).catch(() => undefined);
      await nc.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
