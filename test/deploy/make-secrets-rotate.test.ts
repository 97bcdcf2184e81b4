import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keyring, parseCallers, tokenDigest } from '@licensing/runtime';
import { parsePeppers } from '../../services/account/src/domain/api-key';
import { root } from './support';

// deploy/make-secrets.sh --rotate / --promote / --retire <name> (docs/operations.md, "Rotating secrets"):
// each runs one step of the runbook on the secret files, in a scratch folder, and what it writes is
// what the services' settings accept at that step.

const dir = mkdtempSync(join(tmpdir(), 'licensing-rotate-'));
const env = { ...process.env, SECRETS_DIR: dir };
const run = (...args: string[]) =>
  spawnSync('sh', [join(root, 'deploy/make-secrets.sh'), ...args], { env, encoding: 'utf8' });
const ok = (...args: string[]) => {
  const r = run(...args);
  expect([args.join(' '), r.status, r.stderr]).toEqual([args.join(' '), 0, '']);
};
const file = (name: string) => readFileSync(join(dir, name), 'utf8').trim();

beforeAll(() => {
  execFileSync('sh', [join(root, 'deploy/make-secrets.sh')], { env, stdio: 'ignore' });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(['signing_key_secret', 'webhook_secret_key'])('%s (a keyring)', (name) => {
  it('--rotate adds kN beside the sealing key, --promote makes it seal, --retire keeps only it', () => {
    const old = file(name);
    const setting = name.toUpperCase();
    ok('--rotate', name);
    // Step 1: the old key still seals, the new one opens.
    expect(file(name)).toMatch(new RegExp(`^${old.replace(/[+/]/g, '\\$&')},k2:[A-Za-z0-9+/=]{44}$`));
    expect(Keyring.parse(file(name), setting).currentId).toBe('legacy');
    const k2 = file(name).split(',')[1];
    // Step 2: the new key seals, the old one still opens.
    ok('--promote', name);
    expect(file(name)).toBe(`${k2},${old}`);
    expect(Keyring.parse(file(name), setting).currentId).toBe('k2');
    // Step 4 (after the re-seal): only the new key.
    ok('--retire', name);
    expect(file(name)).toBe(k2);
    // The next rotation adds k3.
    ok('--rotate', name);
    expect(file(name)).toMatch(/^k2:[^,]+,k3:[A-Za-z0-9+/=]{44}$/);
    expect(Keyring.parse(file(name), setting).currentId).toBe('k2');
  });
});

it('api_key_pepper: --rotate makes the bare pepper legacy and adds p2; --promote puts p2 first', () => {
  const old = file('api_key_pepper');
  ok('--rotate', 'api_key_pepper');
  const step1 = parsePeppers(file('api_key_pepper'));
  expect(step1.all.map((p) => p.id)).toEqual(['legacy', 'p2']);
  expect(step1.current).toEqual({ id: 'legacy', pepper: old });
  ok('--promote', 'api_key_pepper');
  const step2 = parsePeppers(file('api_key_pepper'));
  expect(step2.all.map((p) => p.id)).toEqual(['p2', 'legacy']);
  expect(step2.current.pepper).toBe(step1.all[1].pepper);
  ok('--retire', 'api_key_pepper');
  expect(parsePeppers(file('api_key_pepper')).all.map((p) => p.id)).toEqual(['p2']);
});

it('nats_password_<login>: --rotate fills the empty slot; --retire empties the old one; the next goes back', () => {
  const old = file('nats_password_license');
  expect(file('nats_password_license_alt')).toBe('');
  ok('--rotate', 'nats_password_license');
  expect(file('nats_password_license')).toBe(old);
  expect(file('nats_password_license_alt')).toMatch(/^[0-9a-f]{48}$/);
  // Both slots set: a rotation is under way.
  const again = run('--rotate', 'nats_password_license');
  expect(again.status).toBe(1);
  expect(again.stderr).toMatch(/rotation is under way/);
  ok('--retire', 'nats_password_license');
  expect(file('nats_password_license')).toBe('');
  // The plain run keeps a retired slot closed (it makes only what is missing).
  execFileSync('sh', [join(root, 'deploy/make-secrets.sh')], { env, stdio: 'ignore' });
  expect(file('nats_password_license')).toBe('');
  // The one slot in use cannot be retired.
  expect(run('--retire', 'nats_password_license_alt').status).toBe(1);
  ok('--rotate', 'nats_password_license');
  expect(file('nats_password_license')).toMatch(/^[0-9a-f]{48}$/);
  expect(file('nats_password_license')).not.toBe(old);
});

it("internal_token_<caller>: --rotate fills the _alt slot and every service it calls accepts both tokens; --retire drops the old one's digest", () => {
  const oldToken = file('internal_token_gateway');
  ok('--rotate', 'internal_token_gateway');
  const newToken = file('internal_token_gateway_alt');
  expect(newToken).toMatch(/^[0-9a-f]{64}$/);
  for (const svc of ['account', 'product', 'license', 'checkout', 'webhook', 'notification']) {
    const accepted = parseCallers(file(`internal_callers_${svc}`));
    expect(accepted.get('gateway')!.map((d) => `sha256:${d.toString('hex')}`)).toEqual([
      tokenDigest(oldToken),
      tokenDigest(newToken),
    ]);
  }
  ok('--retire', 'internal_token_gateway');
  expect(file('internal_token_gateway')).toBe('');
  for (const svc of ['account', 'product', 'license', 'checkout', 'webhook', 'notification'])
    expect(
      parseCallers(file(`internal_callers_${svc}`))
        .get('gateway')!
        .map((d) => `sha256:${d.toString('hex')}`),
    ).toEqual([tokenDigest(newToken)]);
});

it('refuses what it cannot rotate, and unknown options, with a clear message and no change', () => {
  const before = file('signing_key_secret');
  for (const args of [
    ['--rotate'],
    ['--rotate', 'mongo_root_password'],
    ['--bogus'],
    ['--promote', 'nats_password_gateway'],
  ]) {
    const r = run(...args);
    expect([args, r.status]).toEqual([args, 1]);
    expect(r.stderr).toMatch(/^make-secrets\.sh: /);
  }
  expect(file('signing_key_secret')).toBe(before);
});
