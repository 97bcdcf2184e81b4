// Generates sdks/test-vectors/*.json: what every port of the app's side (sdks/go, sdks/python,
// sdks/java, and @licensing/client) must answer, made here by the system's own code: licence files
// signed as the product service signs them (services/product: payloadWithKid, Ed25519) over payloads
// shaped as the licence service writes them, each case's expected answer given by the TypeScript SDK's
// verifyLicenseFile; webhook deliveries signed as the webhook service signs them (Standard Webhooks),
// judged by verifyWebhook; licence keys read by the gateway's own parser (proto/rules/license-key.ts).
// Keys and times are fixed, so the files are the same on every run: `--check` fails when the committed
// files differ from what the code makes now (npm test runs it, as it checks the generated clients).
// Needs the build (node scripts/build.mjs).
import { createPrivateKey, createPublicKey, sign, createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const out = join(root, 'sdks', 'test-vectors');
const check = process.argv.includes('--check');

const built = (path) => {
  const file = join(root, path);
  if (!existsSync(file)) {
    console.error(`${path} is missing: run node scripts/build.mjs first`);
    process.exit(1);
  }
  return require(file);
};
const { payloadWithKid } = built('services/product/dist/domain/signing.js');
const { signature: webhookSignature } = built('services/webhook/dist/domain/delivery.js');
const { parseLicenseKey, EXAMPLE_LICENSE_KEY } = built('proto/dist/index.js');
const { verifyLicenseFile, verifyWebhook } = built('packages/client/dist/cjs/index.js');

/** An Ed25519 key pair from a fixed seed (PKCS#8 of the 32 seed bytes), so the vectors never change. */
function keyPair(label) {
  const seed = createHash('sha256').update(`licensing test vectors: ${label}`).digest();
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const kid = `kid_${createHash('sha256').update(label).digest('hex').slice(0, 16)}`;
  const public_key_pem = createPublicKey(privateKey).export({ format: 'pem', type: 'spki' }).toString();
  return { kid, privateKey, publicKey: { kid, algorithm: 'Ed25519', public_key_pem } };
}

/** A file as POST /api/v1/licenses/{key}/file answers it: the payload with its kid, signed. */
function fileOf(key, payload) {
  const bytes = payloadWithKid(JSON.stringify(payload), key.kid);
  return {
    kid: key.kid,
    algorithm: 'Ed25519',
    payload: bytes.toString('base64'),
    signature: sign(null, bytes, key.privateKey).toString('base64'),
  };
}

const NOW = '2026-06-01T12:00:00.000Z';
const base = {
  license_key: EXAMPLE_LICENSE_KEY,
  license_id: 'lic_01JD8Z3K6Q2W4E5R6T7Y8V9X0P',
  product_id: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0A',
  customer_email: null,
  status: 'active',
  expires_at: '2027-01-01T00:00:00.000Z',
  fingerprint: null,
  entitlements: [],
  issued_at: '2026-06-01T00:00:00.000Z',
  valid_until: '2026-07-01T00:00:00.000Z',
  expiration_strategy: 'restrict',
};

/** Changes one byte of a base64 value (the first character of its middle third). */
function flipped(b64) {
  const bytes = Buffer.from(b64, 'base64');
  bytes[Math.floor(bytes.length / 3)] ^= 0x01;
  return bytes.toString('base64');
}

/** The fixed keys of the licence-file vectors, and the key sets a verifier is given. */
function fileKeys() {
  const current = keyPair('product A, current key');
  const older = keyPair('product A, older key');
  const other = keyPair('product B');
  const keySets = {
    product_a: [current.publicKey, older.publicKey],
    product_a_without_older: [current.publicKey],
    product_b: [other.publicKey],
  };
  return { current, older, other, keySets };
}

const nodeLocked = { ...base, fingerprint: 'machine-7f3a' };

/** Files every verifier takes: [name, key set, file, {fingerprint, now}]. */
function validFileCases({ current, older }) {
  return [
    ['perpetual licence, no machine', 'product_a', fileOf(current, { ...base, expires_at: null }), {}],
    ['node-locked, on its machine', 'product_a', fileOf(current, nodeLocked), { fingerprint: 'machine-7f3a' }],
    [
      'floating seat file with entitlements',
      'product_a',
      fileOf(current, { ...base, entitlements: ['pdf-export', 'sync'] }),
      {},
    ],
    [
      'subscription with paid_through and grace_until',
      'product_a',
      fileOf(current, { ...base, paid_through: '2026-06-30T00:00:00.000Z', grace_until: '2026-07-07T00:00:00.000Z' }),
      {},
    ],
    ['signed by an older key still listed', 'product_a', fileOf(older, base), {}],
    [
      'maintain_access strategy carried',
      'product_a',
      fileOf(current, { ...base, expiration_strategy: 'maintain_access' }),
      {},
    ],
  ];
}

/** Files every verifier refuses, each for one reason. */
function refusedFileCases({ current, older }) {
  return [
    [
      'one byte of the payload changed',
      'product_a',
      (() => {
        const f = fileOf(current, base);
        return { ...f, payload: flipped(f.payload) };
      })(),
      {},
    ],
    [
      'signature changed',
      'product_a',
      (() => {
        const f = fileOf(current, base);
        return { ...f, signature: flipped(f.signature) };
      })(),
      {},
    ],
    ['unknown kid', 'product_a', { ...fileOf(current, base), kid: 'kid_0000000000000000' }, {}],
    ['kid outside differs from the signed one', 'product_a', { ...fileOf(current, base), kid: older.kid }, {}],
    ['wrong fingerprint', 'product_a', fileOf(current, nodeLocked), { fingerprint: 'machine-other' }],
    ['bound file checked without a fingerprint', 'product_a', fileOf(current, nodeLocked), {}],
    ['expired at the given now', 'product_a', fileOf(current, base), { now: '2026-07-01T00:00:01.000Z' }],
    [
      'issued in the future (beyond 5 minutes of clock skew)',
      'product_a',
      fileOf(current, { ...base, issued_at: '2026-06-01T12:05:01.000Z' }),
      {},
    ],
    [
      'issued within the 5 minutes of clock skew',
      'product_a',
      fileOf(current, { ...base, issued_at: '2026-06-01T12:04:59.000Z' }),
      {},
    ],
  ];
}

/** Files refused for their key, their signed content or their shape. */
function foreignOrMalformedFileCases({ current, older, other }) {
  return [
    ['signed by a key revoked from the public key set', 'product_a_without_older', fileOf(older, base), {}],
    [
      'a file of another product',
      'product_a',
      fileOf(other, { ...base, product_id: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9XBB' }),
      {},
    ],
    [
      'the signed kid differs from the signing key (a file re-labelled)',
      'product_a',
      (() => {
        const bytes = payloadWithKid(JSON.stringify(base), current.kid);
        return {
          kid: older.kid,
          algorithm: 'Ed25519',
          payload: bytes.toString('base64'),
          signature: sign(null, bytes, older.privateKey).toString('base64'),
        };
      })(),
      {},
    ],
    ['a licence that was not active when signed', 'product_a', fileOf(current, { ...base, status: 'suspended' }), {}],
    [
      'a signed JSON array, not an object',
      'product_a',
      (() => {
        const bytes = Buffer.from(JSON.stringify([{ ...base, kid: current.kid }]));
        return {
          kid: current.kid,
          algorithm: 'Ed25519',
          payload: bytes.toString('base64'),
          signature: sign(null, bytes, current.privateKey).toString('base64'),
        };
      })(),
      {},
    ],
    ['issued_at a number, not a date', 'product_a', fileOf(current, { ...base, issued_at: 5 }), {}],
    ['another algorithm', 'product_a', { ...fileOf(current, base), algorithm: 'RS256' }, {}],
    ['not a licence file', 'product_a', { kid: current.kid, algorithm: 'Ed25519', payload: 42 }, {}],
    [
      'payload is not base64 JSON',
      'product_a',
      (() => {
        const bytes = Buffer.from('not json');
        return {
          kid: current.kid,
          algorithm: 'Ed25519',
          payload: bytes.toString('base64'),
          signature: sign(null, bytes, current.privateKey).toString('base64'),
        };
      })(),
      {},
    ],
  ];
}

async function licenseFileVectors() {
  const keys = fileKeys();
  const { keySets } = keys;
  const cases = [...validFileCases(keys), ...refusedFileCases(keys), ...foreignOrMalformedFileCases(keys)];
  const out = [];
  for (const [name, keySet, file, { fingerprint, now = NOW }] of cases) {
    const v = await verifyLicenseFile(file, { publicKeys: keySets[keySet], now: new Date(now), fingerprint });
    out.push({
      name,
      key_set: keySet,
      file,
      fingerprint: fingerprint ?? null,
      now,
      expect: { valid: v.valid, code: v.valid ? 'valid' : v.reason, payload: v.valid ? v.license : null },
    });
  }
  return {
    description:
      'Licence files (POST /api/v1/licenses/{key}/file) and what a verifier answers for each: `code` is "valid" or the reason it is refused. A verifier is given the case\'s key set (GET /api/v1/products/{id}/signing-keys), its fingerprint (null: none given) and its now; `payload` is the signed JSON object when valid. Checks, in order: shape (malformed), algorithm Ed25519 (unsupported_algorithm), kid in the key set (unknown_key), signature over the decoded payload bytes (bad_signature), payload is a JSON object (malformed), its kid equals the file\'s (kid_mismatch), issued_at and valid_until are dates (malformed), status is active (not_active), valid_until >= now (expired), issued_at <= now + 5 minutes (not_yet_valid), and a bound file (fingerprint not null) needs the same fingerprint given (fingerprint_required, fingerprint_mismatch).',
    codes: [
      'valid',
      'malformed',
      'unsupported_algorithm',
      'unknown_key',
      'bad_signature',
      'kid_mismatch',
      'not_active',
      'expired',
      'not_yet_valid',
      'fingerprint_required',
      'fingerprint_mismatch',
    ],
    key_sets: keySets,
    cases: out,
  };
}

async function webhookVectors() {
  const secret = `whsec_${createHash('sha256').update('licensing test vectors: endpoint secret').digest('base64')}`;
  const rotated = `whsec_${createHash('sha256').update('licensing test vectors: new endpoint secret').digest('base64')}`;
  const id = 'evt_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';
  const timestamp = 1780315200; // 2026-06-01T12:00:00Z
  const body = JSON.stringify({
    id,
    type: 'license.created',
    created_at: '2026-06-01T12:00:00.000Z',
    data: { license: { id: 'lic_01JD8Z3K6Q2W4E5R6T7Y8V9X0P', status: 'active' } },
  });
  const sig = (s, t = timestamp, b = body) => webhookSignature(s, id, t, b);
  const cases = [
    ['valid', secret, { signature: sig(secret) }],
    ['tampered body', secret, { signature: sig(secret), body: body.replace('active', 'revoked') }],
    [
      'old timestamp (beyond 5 minutes)',
      secret,
      { signature: sig(secret, timestamp - 301), timestamp: timestamp - 301 },
    ],
    ['timestamp within 5 minutes', secret, { signature: sig(secret, timestamp - 299), timestamp: timestamp - 299 }],
    [
      'rotated secret: two signatures, checked with the new secret',
      rotated,
      { signature: `${sig(secret)} ${sig(rotated)}` },
    ],
    [
      'rotated secret: two signatures, checked with the old secret',
      secret,
      { signature: `${sig(secret)} ${sig(rotated)}` },
    ],
    ['signed with another secret', secret, { signature: sig(rotated) }],
    ['unknown signature version only', secret, { signature: sig(secret).replace('v1,', 'v2,') }],
    ['timestamp not a number', secret, { signature: sig(secret), timestamp: 'yesterday' }],
  ];
  const out = [];
  for (const [name, s, c] of cases) {
    const ts = c.timestamp ?? timestamp;
    const b = c.body ?? body;
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': c.signature };
    const v = await verifyWebhook(b, headers, s, { now: new Date(timestamp * 1000) });
    out.push({
      name,
      secret: s,
      id,
      timestamp: String(ts),
      signature: c.signature,
      body: b,
      now: timestamp,
      expect: { valid: v.valid, code: v.valid ? 'valid' : v.reason },
    });
  }
  return {
    description:
      'Webhook deliveries (Standard Webhooks): the signed content is the id, a dot, the timestamp, a dot and the raw body bytes, HMAC-SHA256 with the base64-decoded part of the whsec_ secret; webhook-signature holds space-separated "v1,<base64>" values (two during a rotation), any one matching is enough (compared in constant time); the timestamp (whole seconds) must be within 300 seconds of now.',
    tolerance_seconds: 300,
    cases: out,
  };
}

/** A native key of this 28-character body: the check characters found by the parser itself. */
function nativeKey(body) {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  for (const a of alphabet)
    for (const b of alphabet) {
      const parsed = parseLicenseKey(body + a + b);
      if (parsed.ok && !parsed.foreign) return parsed.key;
    }
  throw new Error(`no check characters for ${body}`);
}

function licenseKeyVectors() {
  const key = EXAMPLE_LICENSE_KEY;
  const withDigits = nativeKey('10Z10ABCDEFGHJKMNPQRSTVWXY01');
  const plain = key.replace(/-/g, '');
  const swap = (s, i) => s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2);
  const typo = (s, i) => s.slice(0, i) + (s[i] === 'Z' ? 'Y' : 'Z') + s.slice(i + 1);
  const inputs = [
    ['a native key as issued', key],
    ['lower case', key.toLowerCase()],
    ['no hyphens', plain],
    ['hyphens anywhere', `${plain.slice(0, 3)}-${plain.slice(3, 17)}--${plain.slice(17)}`],
    ['surrounding spaces and a tab', ` \t${key}  `],
    ['look-alikes O, I and L for 0 and 1', withDigits.replace(/0/g, 'O').replace('1', 'I').replace(/1/g, 'l')],
    ['the key with 0 and 1', withDigits],
    ['one character mistyped', typo(key, 3)],
    ['one check character mistyped', typo(key, key.length - 1)],
    ['two neighbours swapped', swap(key, 7)],
    ['a native-shaped key one character short: taken as a foreign key', key.slice(0, -1)],
    ['a Keygen hex key (foreign, kept as is)', '4F0C7DBA9E0B4E1D8C3A2B1F6E5D4C3B'],
    ['a Lemon Squeezy UUID (foreign, case kept)', '38b1460a-5104-4067-a91d-77b872934d51'],
    ['a Gumroad key (foreign)', '8D4F7A2E-3B9C41D6-A5E8F0B7-C2D91E4A'],
    ['a foreign key with surrounding spaces', '  38b1460a-5104-4067-a91d-77b872934d51 '],
    ['too short to be any key', 'ABC-123'],
    ['a space inside', '38b1460a 5104-4067'],
    ['characters no key has', 'KEY/WITH/SLASHES-0001'],
    ['longer than 64 characters', 'A'.repeat(65)],
    ['empty', ''],
  ];
  return {
    description:
      'Licence keys as apps read them. A native key is six groups of five Crockford base32 characters (0-9, A-Z without I, L, O, U), the last two a check value: sum over the first 28 characters of (position, from 1) × (value) mod 1021, written as two characters (value / 32, value % 32). Reading one: at most 64 characters; trim surrounding white space, upper-case, drop every hyphen, read O as 0 and I, L as 1; 30 characters of the alphabet is a native key (well_formed when its check value matches; normalized in groups of five); anything else of 8 to 64 characters of A-Z a-z 0-9 . _ ~ + = : - (after trimming) is a foreign key, imported from another system, taken exactly as it is (normalized: trimmed only). reason: format or checksum when not well formed.',
    cases: inputs.map(([name, input]) => {
      const parsed = parseLicenseKey(input);
      return {
        name,
        input,
        expect: parsed.ok
          ? { well_formed: true, normalized: parsed.key, kind: parsed.foreign ? 'foreign' : 'native', reason: null }
          : { well_formed: false, normalized: null, kind: null, reason: parsed.reason },
      };
    }),
  };
}

const files = {
  'license-files.json': await licenseFileVectors(),
  'webhooks.json': await webhookVectors(),
  'license-keys.json': licenseKeyVectors(),
};
let stale = 0;
mkdirSync(out, { recursive: true });
for (const [name, content] of Object.entries(files)) {
  const path = join(out, name);
  const text = `${JSON.stringify(content, null, 2)}\n`;
  if (check) {
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
      console.error(`sdks/test-vectors/${name} differs from what the code makes now: run npm run sdk:vectors`);
      stale++;
    }
  } else writeFileSync(path, text);
}
if (check && stale) process.exit(1);
console.log(check ? 'sdks/test-vectors match the code' : 'sdks/test-vectors written');
