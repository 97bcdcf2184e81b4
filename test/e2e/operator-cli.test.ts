import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { client, startStack, type Stack } from '../support/stack';
import { freePort } from '../../scripts/lib/net';
import { eventually } from '../support/eventually';
import { credentialOf } from '../../scripts/lib/topology';

// The operator CLI and npm start's refusals, run as real processes from the
// build (npm test builds before it runs jest).
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

async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    ACCOUNT_GRPC_ADDR: stack.addrs.account,
    INTERNAL_TOKEN: credentialOf(stack.topology, 'operator').token,
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
    expect(listed.data).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain(api_key);
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
  });
});

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
});
