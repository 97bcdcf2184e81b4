// The conformance command for @licensing/client (docs/sdk-conformance.md): `sdks/conformance typescript …`.
// Verifying files and webhooks and the API calls go through the SDK as an app uses it (its built dist/);
// licence keys through the system's own parser (proto/rules/license-key.ts), which the SDK does not
// carry: every port is held to that one reading.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const client = require(join(root, 'packages', 'client', 'dist', 'cjs', 'index.js'));
const { Transport } = require(join(root, 'packages', 'client', 'dist', 'cjs', 'http.js'));
const { Licenses } = require(join(root, 'packages', 'client', 'dist', 'cjs', 'resources', 'licenses.js'));
const { parseLicenseKey } = require(join(root, 'proto', 'dist', 'index.js'));

class Usage extends Error {}

/** --name value pairs (repeatable ones collected), and the words that are not options. */
function parse(args, repeatable = []) {
  const opts = {};
  const words = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) {
      words.push(a);
      continue;
    }
    const value = args[++i];
    if (value === undefined) throw new Usage(`${a} needs a value`);
    const name = a.slice(2);
    if (repeatable.includes(name)) opts[name] = [...(opts[name] ?? []), value];
    else opts[name] = value;
  }
  return { opts, words };
}

function need(opts, ...names) {
  for (const n of names) if (opts[n] === undefined) throw new Usage(`--${n} is required`);
}

function only(opts, allowed) {
  for (const n of Object.keys(opts)) if (!allowed.includes(n)) throw new Usage(`unknown option --${n}`);
}

// Each command answers [what to print, whether it is a success (exit 0) or not (exit 1)].

async function verifyFile(opts) {
  only(opts, ['public-keys', 'file', 'fingerprint', 'now']);
  need(opts, 'public-keys', 'file');
  const publicKeys = JSON.parse(readFileSync(opts['public-keys'], 'utf8'));
  const file = JSON.parse(readFileSync(opts.file, 'utf8'));
  return fileAnswer(file, publicKeys, opts.fingerprint, opts.now);
}

async function fileAnswer(file, publicKeys, fingerprint, now) {
  const v = await client.verifyLicenseFile(file, {
    publicKeys,
    fingerprint: fingerprint ?? undefined,
    now: now ? new Date(now) : undefined,
  });
  return [{ valid: v.valid, code: v.valid ? 'valid' : v.reason, payload: v.valid ? v.license : null }, v.valid];
}

async function verifyWebhook(opts) {
  only(opts, ['secret', 'id', 'timestamp', 'signature', 'body-file', 'now']);
  need(opts, 'secret', 'id', 'timestamp', 'signature', 'body-file');
  if (opts.now !== undefined && !/^\d+$/.test(opts.now)) throw new Usage('--now must be Unix seconds');
  return webhookAnswer(opts.secret, opts.id, opts.timestamp, opts.signature, readFileSync(opts['body-file']), opts.now);
}

async function webhookAnswer(secret, id, timestamp, signature, body, now) {
  const headers = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
  const at = now === undefined ? undefined : new Date(Number(now) * 1000);
  const v = await client.verifyWebhook(body, headers, secret, { now: at });
  return [{ valid: v.valid, code: v.valid ? 'valid' : v.reason }, v.valid];
}

function keyAnswer(input) {
  const p = parseLicenseKey(input);
  return p.ok
    ? [{ well_formed: true, normalized: p.key, kind: p.foreign ? 'foreign' : 'native', reason: null }, true]
    : [{ well_formed: false, normalized: null, kind: null, reason: p.reason }, false];
}

/** The SDK's licence resource speaking as the licence itself (Authorization: License <key>). */
function licenceClient(opts) {
  need(opts, 'base-url', 'license-key');
  const http = new Transport({
    baseUrl: opts['base-url'],
    licenseKey: opts['license-key'],
    fetch: (input, init) => globalThis.fetch(input, init),
    timeoutMs: 30_000,
    maxRetries: 2,
    maxRetryDelayMs: 30_000,
  });
  return new Licenses(http);
}

const api = {
  async validate(opts) {
    only(opts, ['base-url', 'license-key', 'fingerprint', 'entitlement']);
    const answer = await licenceClient(opts).validate(opts['license-key'], {
      fingerprint: opts.fingerprint,
      entitlements: opts.entitlement ?? [],
    });
    return [answer, answer.valid === true];
  },
  async activate(opts) {
    only(opts, ['base-url', 'license-key', 'fingerprint', 'name']);
    need(opts, 'fingerprint');
    const a = await licenceClient(opts).activate(opts['license-key'], {
      fingerprint: opts.fingerprint,
      name: opts.name,
    });
    return [{ activation_id: a.id }, true];
  },
  async heartbeat(opts) {
    only(opts, ['base-url', 'license-key', 'activation-id']);
    need(opts, 'activation-id');
    const a = await licenceClient(opts).heartbeat(opts['license-key'], opts['activation-id']);
    return [{ activation_id: a.id, lease_expires_at: a.lease_expires_at ?? null }, true];
  },
  async deactivate(opts) {
    only(opts, ['base-url', 'license-key', 'activation-id']);
    need(opts, 'activation-id');
    await licenceClient(opts).deactivate(opts['license-key'], opts['activation-id']);
    return [{ deactivated: true }, true];
  },
  async 'fetch-file'(opts) {
    only(opts, ['base-url', 'license-key', 'fingerprint']);
    const key = opts['license-key'];
    const f = await licenceClient(opts).file(key, opts.fingerprint ? { fingerprint: opts.fingerprint } : {});
    return [f, true];
  },
};

/** Every case of the three vector files, through the same code as the single commands. */
async function vectors(opts) {
  only(opts, ['dir']);
  need(opts, 'dir');
  const read = (name) => JSON.parse(readFileSync(join(opts.dir, name), 'utf8'));
  const failed = [];
  let passed = 0;
  const judge = (file, name, expected, got) => {
    if (JSON.stringify(expected) === JSON.stringify(got)) passed++;
    else failed.push({ file, name, expected, got });
  };
  const files = read('license-files.json');
  for (const c of files.cases) {
    const [got] = await fileAnswer(c.file, files.key_sets[c.key_set], c.fingerprint, c.now);
    judge('license-files.json', c.name, c.expect, got);
  }
  for (const c of read('webhooks.json').cases) {
    const [got] = await webhookAnswer(c.secret, c.id, c.timestamp, c.signature, Buffer.from(c.body), c.now);
    judge('webhooks.json', c.name, c.expect, got);
  }
  for (const c of read('license-keys.json').cases) judge('license-keys.json', c.name, c.expect, keyAnswer(c.input)[0]);
  return [{ passed, failed }, failed.length === 0];
}

async function run(argv) {
  const [command, ...rest] = argv;
  const { opts, words } = parse(rest, ['entitlement']);
  if (command === 'check-key') {
    if (words.length !== 1 || Object.keys(opts).length) throw new Usage('check-key takes one KEY');
    return keyAnswer(words[0]);
  }
  if (words.length) throw new Usage(`unexpected ${words[0]}`);
  if (command === 'verify-file') return verifyFile(opts);
  if (command === 'verify-webhook') return verifyWebhook(opts);
  if (command === 'vectors') return vectors(opts);
  if (Object.hasOwn(api, command ?? '')) return api[command](opts);
  throw new Usage(`unknown command ${command ?? ''}`);
}

try {
  const [answer, ok] = await run(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(answer)}\n`);
  process.exitCode = ok ? 0 : 1;
} catch (err) {
  if (err instanceof Usage) {
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
  } else if (err instanceof client.LicensingError) {
    const error = { status: err.status, code: err.code, detail: err.detail, next_action: err.nextAction ?? null };
    process.stdout.write(`${JSON.stringify({ error })}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exitCode = 1;
  }
}
